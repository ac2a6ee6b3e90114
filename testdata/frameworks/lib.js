'use strict';
// Shared by the Node scenarios: names with the recorder's suffix, bounded
// waits, the parking lot's depth, the meta file recorder.py reads.
const fs = require('node:fs');
const path = require('node:path');
const amqplib = require('amqplib');

const SUFFIX = process.env.SUFFIX;
if (!SUFFIX || !process.env.META_OUT) {
  console.error('run me through recorder.py (SUFFIX and META_OUT unset)');
  process.exit(2);
}
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672/';
const MANAGEMENT_URL = process.env.MANAGEMENT_URL || 'http://guest:guest@127.0.0.1:15672';

// name('orders.process') is 'orders.process-<suffix>'; recorder.py renames it back.
const name = (base) => `${base}-${SUFFIX}`;

const version = (pkg) =>
  JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', pkg, 'package.json'), 'utf8')).version;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, fn, ms = 20000, every = 100) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(every);
  }
}

// The whole scenario is bounded too: it never hangs the recording.
function deadline(ms = 60000) {
  setTimeout(() => {
    console.error(`scenario: gave up after ${ms} ms`);
    process.exit(3);
  }, ms).unref();
}

// Messages ready in a queue (passive declare, on a channel of its own).
async function depth(queue) {
  const conn = await amqplib.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await conn.close().catch(() => {});
  }
}

// Wait until the parking lot holds one message, then make sure the handler
// is done with it: the count of runs and the depth must stay put a while.
async function waitParked(parkingLot, runs, settleMs = 1000) {
  await waitFor(`a message in ${parkingLot}`, async () => (await depth(parkingLot)) >= 1);
  const n = runs();
  await sleep(settleMs);
  const d = await depth(parkingLot);
  if (d !== 1 || runs() !== n) throw new Error(`not settled: ${d} parked, handler ran ${n} then ${runs()} times`);
}

async function management(method, p, body) {
  const u = new URL(MANAGEMENT_URL);
  const auth = Buffer.from(`${decodeURIComponent(u.username || 'guest')}:${decodeURIComponent(u.password || 'guest')}`).toString('base64');
  const res = await fetch(`${u.protocol}//${u.host}${p}`, {
    method,
    headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10000),
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

const writeMeta = (meta) => fs.writeFileSync(process.env.META_OUT, JSON.stringify(meta, null, 2));

// The order every scenario publishes; it names no queue or exchange (the
// recorder renames names, never bodies).
const ORDER = { orderId: 1042, amount: '19.99', currency: 'EUR' };
const ERROR_TEXT = 'order 1042: payment service unavailable';

module.exports = { SUFFIX, AMQP_URL, MANAGEMENT_URL, name, version, sleep, waitFor, deadline, depth, waitParked, management, writeMeta, ORDER, ERROR_TEXT };
