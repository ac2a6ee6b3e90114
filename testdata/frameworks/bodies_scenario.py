#!/usr/bin/python3
"""kombu-msgpack-zlib and pika-gzip-json scenarios, run through recorder.py:
parked messages whose bodies are not plain text, written by the producers'
own libraries.

  bodies_scenario.py kombu-msgpack-zlib
      kombu Producer(serializer='msgpack', compression='gzip'): kombu packs
      the order with python3-msgpack (content_type application/x-msgpack)
      and compresses it with zlib.compress, saying so in a "compression"
      header (application/x-gzip), not in content_encoding.
  bodies_scenario.py pika-gzip-json
      pika publishes the order as JSON compressed by Python's gzip module,
      with content_type application/json and content_encoding gzip.

Either way the consumer rejects it (requeue False) and the broker
dead-letters it through the fanout orders.dlx to the parking lot.
"""

import gzip
import json
import socket
import sys

import scenario_lib as lib

# Richer than lib.ORDER: nested maps, a list, a float, an int, a bool,
# bytes (MessagePack bin) and a null, so every kind of value is read back.
ORDER = {
    "order_id": "4711",
    "amount": 1200.5,
    "currency": "EUR",
    "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-7", "qty": 1}],
    "customer": {"id": "C-77", "vip": True},
    "coupon": None,
}


def kombu_msgpack_zlib():
    import kombu
    from kombu import Connection, Consumer, Exchange, Producer, Queue

    exchange = Exchange(lib.name("orders"), "topic", durable=True)
    dlx = Exchange(lib.name("orders.dlx"), "fanout", durable=True)
    routing_key = "order.created"
    queue = Queue(lib.name("orders.process"), exchange, routing_key=routing_key,
                  queue_arguments={"x-dead-letter-exchange": dlx.name})
    parking_lot = Queue(lib.name("orders.process.parking-lot"), dlx, routing_key="")
    runs = 0

    def on_message(body, message):
        nonlocal runs
        runs += 1
        message.reject()  # requeue=False: dead-lettered to orders.dlx

    order = dict(ORDER, signature=b"\x00\x9f\xfe")  # a bin value that is not UTF-8
    with Connection(lib.AMQP_URL, connect_timeout=10) as conn:
        channel = conn.channel()
        parking_lot(channel).declare()
        producer = Producer(channel, serializer="msgpack", compression="gzip")
        producer.publish(order, exchange=exchange, routing_key=routing_key, declare=[queue], retry=False)
        probe = conn.channel()

        def step(seconds):
            try:
                conn.drain_events(timeout=seconds)
            except socket.timeout:
                pass

        with Consumer(conn.channel(), queues=[queue], callbacks=[on_message], accept=["msgpack"], prefetch_count=1):
            lib.wait_parked(lambda: probe.queue_declare(queue=parking_lot.name, passive=True).message_count,
                            lambda: runs, step=step)
    import msgpack
    return {
        "framework": {"name": "kombu", "version": kombu.__version__, "msgpack": msgpack.version and ".".join(map(str, msgpack.version))},
        "description": (
            "kombu Producer(serializer='msgpack', compression='gzip') publishes the order to the topic exchange orders / "
            "order.created: content_type application/x-msgpack, content_encoding binary, the body zlib.compress(msgpack) "
            "with a 'compression: application/x-gzip' header (kombu's name for zlib). A kombu Consumer on orders.process "
            "(x-dead-letter-exchange orders.dlx) rejects it; the broker dead-letters it to orders.process.parking-lot."),
        "parking_lot": parking_lot.name,
        "consumed_from": queue.name,
        "published_to": {"exchange": exchange.name, "routing_key": routing_key},
        "handler_runs": runs,
        "error": None,
        "id": None,
        "decoded": json.loads(json.dumps(dict(order, signature=None))),
        "flow": [
            "Producer.publish(order, serializer msgpack, compression gzip) → orders.process",
            "delivery 1: the callback calls message.reject() (requeue False)",
            "the broker dead-letters it (reason rejected) to orders.dlx (fanout) → orders.process.parking-lot",
        ],
    }


def pika_gzip_json():
    import pika

    exchange = lib.name("orders")
    dlx = lib.name("orders.dlx")
    queue = lib.name("orders.process")
    parking_lot = lib.name("orders.process.parking-lot")
    routing_key = "order.created"
    params = pika.URLParameters(lib.AMQP_URL)
    params.socket_timeout = 10
    conn = pika.BlockingConnection(params)
    runs = 0
    try:
        ch = conn.channel()
        ch.confirm_delivery()
        ch.exchange_declare(exchange, "topic", durable=True)
        ch.exchange_declare(dlx, "fanout", durable=True)
        ch.queue_declare(queue, durable=True, arguments={"x-dead-letter-exchange": dlx})
        ch.queue_bind(queue, exchange, routing_key)
        ch.queue_declare(parking_lot, durable=True)
        ch.queue_bind(parking_lot, dlx, "")

        def on_message(ch, method, props, body):
            nonlocal runs
            runs += 1
            ch.basic_reject(method.delivery_tag, requeue=False)

        ch.basic_qos(prefetch_count=1)
        ch.basic_consume(queue, on_message)
        ch.basic_publish(exchange, routing_key, gzip.compress(json.dumps(ORDER).encode()),
                         pika.BasicProperties(content_type="application/json", content_encoding="gzip", delivery_mode=2))
        probe = conn.channel()
        lib.wait_parked(lambda: probe.queue_declare(parking_lot, passive=True).method.message_count,
                        lambda: runs, step=lambda s: conn.process_data_events(time_limit=s))
    finally:
        conn.close()
    return {
        "framework": {"name": "pika", "version": pika.__version__},
        "description": (
            "pika publishes the order to the topic exchange orders / order.created as gzip.compress(json.dumps(order)) "
            "with content_type application/json and content_encoding gzip; the consumer on orders.process "
            "(x-dead-letter-exchange orders.dlx) rejects it with basic_reject(requeue=False) and the broker dead-letters "
            "it to orders.process.parking-lot."),
        "parking_lot": parking_lot,
        "consumed_from": queue,
        "published_to": {"exchange": exchange, "routing_key": routing_key},
        "handler_runs": runs,
        "error": None,
        "id": None,
        "decoded": ORDER,
        "flow": [
            "basic_publish(gzip(JSON), content_encoding gzip) → orders.process",
            "basic_reject(requeue=False) → dead-lettered (reason rejected) to orders.dlx → orders.process.parking-lot",
        ],
    }


def main():
    lib.deadline(60)
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    run = {"kombu-msgpack-zlib": kombu_msgpack_zlib, "pika-gzip-json": pika_gzip_json}.get(which)
    if run is None:
        sys.exit(f"bodies_scenario.py: no scenario {which!r}")
    lib.write_meta(run())


if __name__ == "__main__":
    main()
