'use strict';
// amqplib scenarios (node amqplib.js ttl-loop | quorum-delivery-limit), run
// through recorder.py.
//
// ttl-loop: the classic NestJS/amqplib retry loop. orders.process dead-letters
// rejected messages to orders.retry; the wait queue orders.process.retry
// holds them 200 ms (x-message-ttl) and dead-letters them back through the
// default exchange to orders.process. The consumer counts its attempts from
// the x-death entry the broker keeps for orders.process (reason rejected);
// the third failure is sent to the parking lot with the error in a header,
// the way such consumers usually do it, and acked.
//
// quorum-delivery-limit: a quorum queue whose delivery limit comes from a
// policy; the consumer gives every failed delivery back with
// basic.reject(requeue=true) until the broker dead-letters the message
// (reason delivery_limit) to the parking lot. Not basic.nack: from RabbitMQ
// 4.3 on, a nack with requeue does not count as a failed delivery (it does
// not raise the delivery count) and the message would cycle for ever.
const amqplib = require('amqplib');
const lib = require('./lib');

const MAX_ATTEMPTS = 3;
const DELIVERY_LIMIT = 3;

async function ttlLoop(conn) {
  const exchange = lib.name('orders');
  const retryExchange = lib.name('orders.retry');
  const queue = lib.name('orders.process');
  const waitQueue = lib.name('orders.process.retry');
  const parkingLot = lib.name('orders.process.parking-lot');
  const routingKey = 'order.created';

  const ch = await conn.createConfirmChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  await ch.assertExchange(retryExchange, 'fanout', { durable: true });
  await ch.assertQueue(queue, { durable: true, deadLetterExchange: retryExchange });
  await ch.bindQueue(queue, exchange, routingKey);
  await ch.assertQueue(waitQueue, { durable: true, messageTtl: 200, deadLetterExchange: '', deadLetterRoutingKey: queue });
  await ch.bindQueue(waitQueue, retryExchange, '');
  await ch.assertQueue(parkingLot, { durable: true });

  let runs = 0;
  await ch.prefetch(1);
  await ch.consume(queue, async (msg) => {
    runs++;
    const death = (msg.properties.headers['x-death'] || []).find((d) => d.queue === queue && d.reason === 'rejected');
    const attempt = (death ? Number(death.count) : 0) + 1;
    try {
      throw new Error(lib.ERROR_TEXT); // the order service is down
    } catch (err) {
      if (attempt < MAX_ATTEMPTS) {
        ch.nack(msg, false, false); // to orders.retry, back in 200 ms
        return;
      }
      ch.sendToQueue(parkingLot, msg.content, {
        ...msg.properties,
        headers: {
          ...msg.properties.headers,
          'x-exception-message': err.message,
          'x-original-exchange': msg.fields.exchange,
          'x-original-routing-key': msg.fields.routingKey,
          'x-attempts': attempt,
        },
      });
      await ch.waitForConfirms();
      ch.ack(msg);
    }
  });

  ch.publish(exchange, routingKey, Buffer.from(JSON.stringify(lib.ORDER)), { contentType: 'application/json', persistent: true });
  await ch.waitForConfirms();
  await lib.waitParked(parkingLot, () => runs);

  return {
    description:
      'amqplib nack → TTL queue → default exchange loop: orders.process dead-letters rejected messages to the fanout orders.retry, ' +
      'whose queue orders.process.retry (x-message-ttl 200) dead-letters them back to orders.process through the default exchange. ' +
      `The consumer counts attempts from the x-death entry for orders.process (reason rejected) and on attempt ${MAX_ATTEMPTS} ` +
      'sends the message to the parking lot itself (sendToQueue, default exchange) with the original properties and headers ' +
      '(x-death included, re-encoded by amqplib) plus x-exception-message, x-original-exchange, x-original-routing-key and x-attempts, then acks.',
    parking_lot: parkingLot,
    consumed_from: queue,
    published_to: { exchange, routing_key: routingKey },
    handler_runs: runs,
    flow: [
      'producer publishes to orders / order.created (no message_id: amqplib assigns none) → orders.process',
      'attempts 1 and 2 fail: nack(requeue=false) → dead-lettered to orders.retry → orders.process.retry → expires after 200 ms → default exchange / orders.process',
      `attempt ${MAX_ATTEMPTS} fails: the consumer publishes a copy to the default exchange / orders.process.parking-lot and acks`,
    ],
  };
}

async function quorumDeliveryLimit(conn) {
  const exchange = lib.name('orders');
  const dlx = lib.name('orders.dlx');
  const queue = lib.name('orders.process');
  const parkingLot = lib.name('orders.process.parking-lot');
  const policy = lib.name('orders-delivery-limit');
  const routingKey = 'order.created';

  // The policy first, so the queue has its limit from the start.
  const pattern = `^${queue.replace(/\./g, '\\.')}$`;
  await lib.management('PUT', `/api/policies/%2F/${encodeURIComponent(policy)}`, {
    pattern,
    'apply-to': 'queues',
    priority: 1,
    definition: { 'delivery-limit': DELIVERY_LIMIT },
  });

  const ch = await conn.createConfirmChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  await ch.assertExchange(dlx, 'fanout', { durable: true });
  await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': dlx } });
  await ch.bindQueue(queue, exchange, routingKey);
  await ch.assertQueue(parkingLot, { durable: true });
  await ch.bindQueue(parkingLot, dlx, '');
  // The policy must be in force before the message goes in.
  await lib.waitFor('the delivery-limit policy on the queue', async () => {
    const q = await lib.management('GET', `/api/queues/%2F/${encodeURIComponent(queue)}`);
    return q.policy === policy;
  }, 20000, 200);

  let runs = 0;
  await ch.prefetch(1);
  await ch.consume(queue, (msg) => {
    runs++;
    try {
      throw new Error(lib.ERROR_TEXT);
    } catch (err) {
      // The consumer gives the message back every time and leaves it to
      // the broker's delivery limit to stop. basic.reject, not basic.nack:
      // only reject counts against the limit on RabbitMQ 4.3.
      ch.reject(msg, true);
    }
  });

  ch.publish(exchange, routingKey, Buffer.from(JSON.stringify(lib.ORDER)), { contentType: 'application/json', persistent: true });
  await ch.waitForConfirms();
  await lib.waitParked(parkingLot, () => runs);

  return {
    description:
      `A quorum queue orders.process with x-dead-letter-exchange orders.dlx (a queue argument) and delivery-limit ${DELIVERY_LIMIT} from a policy; ` +
      'an amqplib consumer fails and gives the message back with basic.reject(requeue=true) every time until the broker dead-letters ' +
      'it with reason delivery_limit ' +
      'to the fanout orders.dlx → orders.process.parking-lot. Nobody writes the error into the message.',
    parking_lot: parkingLot,
    consumed_from: queue,
    published_to: { exchange, routing_key: routingKey },
    handler_runs: runs,
    flow: [
      `policy orders-delivery-limit: pattern ${pattern} apply-to queues, delivery-limit ${DELIVERY_LIMIT}`,
      'producer publishes to orders / order.created (no message_id) → orders.process (quorum)',
      'every delivery: the handler fails, basic.reject(requeue=true) (on RabbitMQ 4.3 basic.nack(requeue=true) would not count against the limit)',
      'past the delivery limit the broker dead-letters it (reason delivery_limit) to orders.dlx → orders.process.parking-lot',
    ],
  };
}

async function main() {
  lib.deadline(60000);
  const which = process.argv[2];
  const scenario = { 'ttl-loop': ttlLoop, 'quorum-delivery-limit': quorumDeliveryLimit }[which];
  if (!scenario) throw new Error(`usage: amqplib.js ttl-loop|quorum-delivery-limit (not ${which})`);
  const conn = await amqplib.connect(lib.AMQP_URL);
  try {
    const meta = await scenario(conn);
    lib.writeMeta({
      framework: { name: 'amqplib', version: lib.version('amqplib') },
      ...meta,
      error: lib.ERROR_TEXT,
      id: null,
    });
  } finally {
    await conn.close().catch(() => {});
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
