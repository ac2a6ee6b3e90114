'use strict';
// rascal scenarios (node rascal.js forward | nack), run through recorder.py.
//
// Both subscribe to orders.process and recover a failed message with
//   [{ strategy: 'republish', attempts: 3, defer: 200 }, <then>]
// as rascal's README shows: republish puts a copy back on the queue (default
// exchange, routing key = the queue) with rascal's nested header table, up to
// three times; after that
//   forward: { strategy: 'forward', publication: 'park' } publishes the
//            message to the orders.park exchange → orders.process.parking-lot;
//   nack:    { strategy: 'nack' } rejects it (requeue false) and the queue's
//            dead-letter exchange orders.dlx routes it to the parking lot.
const rascal = require('rascal');
const lib = require('./lib');

const ATTEMPTS = 3;

async function main() {
  lib.deadline(60000);
  const mode = process.argv[2];
  if (mode !== 'forward' && mode !== 'nack') throw new Error(`usage: rascal.js forward|nack (not ${mode})`);

  const exchange = lib.name('orders');
  const queue = lib.name('orders.process');
  const parkingLot = lib.name('orders.process.parking-lot');
  const parkExchange = lib.name(mode === 'forward' ? 'orders.park' : 'orders.dlx');
  const routingKey = 'order.created';
  const recovery = [
    { strategy: 'republish', attempts: ATTEMPTS, defer: 200 },
    mode === 'forward' ? { strategy: 'forward', publication: 'park' } : { strategy: 'nack' },
  ];

  const queueArguments = mode === 'nack' ? { 'x-dead-letter-exchange': parkExchange } : {};
  const config = rascal.withDefaultConfig({
    vhosts: {
      '/': {
        connection: { url: lib.AMQP_URL },
        exchanges: {
          [exchange]: { type: 'topic' },
          [parkExchange]: { type: 'fanout' },
        },
        queues: {
          [queue]: { options: { arguments: queueArguments } },
          [parkingLot]: {},
        },
        bindings: {
          main: { source: exchange, destination: queue, bindingKey: routingKey },
          park: { source: parkExchange, destination: parkingLot, bindingKey: '' },
        },
        publications: {
          orders: { exchange, routingKey },
          ...(mode === 'forward' ? { park: { exchange: parkExchange } } : {}),
        },
        subscriptions: {
          process: { queue, prefetch: 1 },
        },
      },
    },
  });

  const broker = await rascal.BrokerAsPromised.create(config);
  broker.on('error', (err) => console.error('rascal broker error:', err.message));
  let runs = 0;
  let messageId = null;
  try {
    const subscription = await broker.subscribe('process');
    subscription.on('error', (err) => console.error('rascal subscription error:', err.message));
    subscription.on('message', (message, content, ackOrNack) => {
      runs++;
      messageId = message.properties.messageId;
      try {
        throw new Error(lib.ERROR_TEXT); // the order service is down
      } catch (err) {
        ackOrNack(err, recovery);
      }
    });

    const publication = await broker.publish('orders', lib.ORDER);
    await new Promise((resolve, reject) => {
      publication.on('success', resolve).on('error', reject).on('return', () => reject(new Error('returned')));
    });
    await lib.waitParked(parkingLot, () => runs);
  } finally {
    await broker.shutdown().catch(() => {});
  }

  const then = mode === 'forward'
    ? "forward to publication park (exchange orders.park, fanout) → orders.process.parking-lot, ack"
    : 'nack (requeue false) → x-dead-letter-exchange orders.dlx (fanout) → orders.process.parking-lot';
  lib.writeMeta({
    framework: { name: 'rascal', version: lib.version('rascal'), amqplib: lib.version('amqplib') },
    description:
      `rascal subscription on orders.process; the handler fails and calls ackOrNack(err, ${JSON.stringify(recovery)}). ` +
      `republish copies the message back onto orders.process (default exchange) ${ATTEMPTS} times with rascal's nested header table ` +
      `(rascal.recovery.<queue>.republished, rascal.originalExchange/originalRoutingKey/originalQueue, rascal.error); then ${then}.`,
    parking_lot: parkingLot,
    consumed_from: queue,
    published_to: { exchange, routing_key: routingKey },
    handler_runs: runs,
    error: lib.ERROR_TEXT,
    id: messageId,
    flow: [
      'broker.publish("orders") → exchange orders / order.created (rascal sets message_id to a UUID) → orders.process',
      `attempts 1 to ${ATTEMPTS}: after 200 ms (defer) republish to the default exchange / orders.process with rascal.recovery.orders.process.republished = 1..${ATTEMPTS}, ack`,
      `attempt ${ATTEMPTS + 1}: republish is skipped (attempts reached); ${then}`,
    ],
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
