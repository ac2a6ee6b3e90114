'use strict';
// nestjs-golevelup scenario (node nestjs.js), run through recorder.py.
//
// A NestJS application context with @golevelup/nestjs-rabbitmq: the module
// declares the exchanges and the parking lot; a provider's @RabbitSubscribe
// handler consumes orders.process, whose x-dead-letter-exchange (queueOptions
// deadLetterExchange) is the fanout orders.dlx bound to the parking lot.
// The handler fails: the first time it returns new Nack(true) (requeue, one
// more try); on the redelivery it throws and the subscription's errorHandler
// (golevelup's defaultNackErrorHandler, i.e. errorBehavior NACK) nacks
// without requeue, so the broker dead-letters it to the parking lot.
//
// Plain JS: the decorators are applied with Reflect.decorate, as TypeScript's
// emitted __decorate does.
require('reflect-metadata');
const { Module, Injectable } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { RabbitMQModule, RabbitSubscribe, AmqpConnection, Nack, defaultNackErrorHandler } = require('@golevelup/nestjs-rabbitmq');
const lib = require('./lib');

const exchange = lib.name('orders');
const dlx = lib.name('orders.dlx');
const queue = lib.name('orders.process');
const parkingLot = lib.name('orders.process.parking-lot');
const routingKey = 'order.created';

let runs = 0;

class OrdersConsumer {
  async handle(order, amqpMsg) {
    runs++;
    try {
      throw new Error(lib.ERROR_TEXT); // the order service is down
    } catch (err) {
      if (!amqpMsg.fields.redelivered) return new Nack(true); // one more try
      throw err; // → errorHandler: nack without requeue → orders.dlx
    }
  }
}
const decorate = (decorators, target, key) =>
  Object.defineProperty(target, key, Reflect.decorate(decorators, target, key, Object.getOwnPropertyDescriptor(target, key)));
decorate(
  [
    RabbitSubscribe({
      exchange,
      routingKey,
      queue,
      queueOptions: { durable: true, deadLetterExchange: dlx },
      errorHandler: defaultNackErrorHandler,
    }),
  ],
  OrdersConsumer.prototype,
  'handle',
);
const Consumer = Reflect.decorate([Injectable()], OrdersConsumer);

class AppModule {}
const App = Reflect.decorate(
  [
    Module({
      imports: [
        RabbitMQModule.forRoot({
          uri: lib.AMQP_URL,
          exchanges: [
            { name: exchange, type: 'topic' },
            { name: dlx, type: 'fanout' },
          ],
          queues: [{ name: parkingLot, options: { durable: true }, exchange: dlx, routingKey: '' }],
          connectionInitOptions: { wait: true, timeout: 10000 },
        }),
      ],
      providers: [Consumer],
    }),
  ],
  AppModule,
);

// The amqplib that amqp-connection-manager (golevelup's connection layer)
// loads: its peer dependency resolves to the top-level amqplib, not to the
// copy golevelup nests for itself.
function wireAmqplib() {
  const path = require('node:path');
  const fs = require('node:fs');
  let dir = path.dirname(require.resolve('amqplib', { paths: [path.dirname(require.resolve('amqp-connection-manager'))] }));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return `${JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version} (${path.relative(__dirname, dir)})`;
}

async function main() {
  lib.deadline(60000);
  const app = await NestFactory.createApplicationContext(App, { logger: ['fatal'] });
  try {
    await app.init();
    const amqp = app.get(AmqpConnection);
    // As a NestJS service publishes: golevelup serializes to JSON and sets
    // no content type and no message id of its own.
    await amqp.publish(exchange, routingKey, lib.ORDER);
    await lib.waitParked(parkingLot, () => runs);
  } finally {
    await app.close().catch(() => {});
  }
  lib.writeMeta({
    framework: {
      name: '@golevelup/nestjs-rabbitmq',
      version: lib.version('@golevelup/nestjs-rabbitmq'),
      '@nestjs/core': lib.version('@nestjs/core'),
      // the amqplib on the wire: the one amqp-connection-manager loads
      amqplib: wireAmqplib(),
      'amqp-connection-manager': lib.version('amqp-connection-manager'),
    },
    description:
      'NestJS (@nestjs/core) application with @golevelup/nestjs-rabbitmq: @RabbitSubscribe on orders.process (exchange orders, ' +
      'routing key order.created, queueOptions.deadLetterExchange orders.dlx, errorHandler defaultNackErrorHandler). ' +
      'The handler returns new Nack(true) on the first delivery and throws on the redelivery; golevelup nacks it without requeue ' +
      'and the broker dead-letters it through the fanout orders.dlx to orders.process.parking-lot. golevelup writes nothing of ' +
      'its own into the message (no content type, no message id, no error header): the parked message carries only what the broker adds.',
    parking_lot: parkingLot,
    consumed_from: queue,
    published_to: { exchange, routing_key: routingKey },
    handler_runs: runs,
    error: lib.ERROR_TEXT,
    id: null,
    flow: [
      'AmqpConnection.publish(orders, order.created, {…}) → orders.process',
      'delivery 1: the handler fails and returns new Nack(true): requeued',
      'delivery 2 (redelivered): the handler throws; defaultNackErrorHandler nacks with requeue=false',
      'the broker dead-letters it (reason rejected) to orders.dlx (fanout) → orders.process.parking-lot',
    ],
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
