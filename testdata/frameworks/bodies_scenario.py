#!/usr/bin/python3
"""Scenarios of parked messages whose bodies are not plain text, written by
the producers' own libraries, run through recorder.py:

  bodies_scenario.py kombu-msgpack-zlib
      kombu Producer(serializer='msgpack', compression='gzip'): kombu packs
      the order with python3-msgpack (content_type application/x-msgpack)
      and compresses it with zlib.compress, saying so in a "compression"
      header (application/x-gzip), not in content_encoding.
  bodies_scenario.py pika-gzip-json
      pika publishes the order as JSON compressed by Python's gzip module,
      with content_type application/json and content_encoding gzip.
  bodies_scenario.py pika-protobuf
      pika publishes an order serialised by python3-protobuf from
      schemas/producer/shop.proto (compiled by protoc here), one field newer
      than schemas/shop.proto, with content_type
      application/x-protobuf; messageType=shop.Order.
  bodies_scenario.py pika-avro-confluent
      pika publishes a payment written by python3-avro with
      schemas/payment.avsc in the Confluent wire format (a zero byte, schema
      id 7, the datum), content_type avro/binary.

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

    meta = pika_park(gzip.compress(json.dumps(ORDER).encode()),
                     pika.BasicProperties(content_type="application/json", content_encoding="gzip", delivery_mode=2),
                     "pika publishes the order to the topic exchange orders / order.created as "
                     "gzip.compress(json.dumps(order)) with content_type application/json and content_encoding gzip.")
    meta["decoded"] = ORDER
    return meta


def pika_park(body, props, describe):
    """Publish body with props to orders / order.created; the consumer on
    orders.process rejects it into the DLX. Returns the meta common to the
    pika body scenarios."""
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

        def on_message(ch, method, _props, _body):
            nonlocal runs
            runs += 1
            ch.basic_reject(method.delivery_tag, requeue=False)

        ch.basic_qos(prefetch_count=1)
        ch.basic_consume(queue, on_message)
        ch.basic_publish(exchange, routing_key, body, props)
        probe = conn.channel()
        lib.wait_parked(lambda: probe.queue_declare(parking_lot, passive=True).method.message_count,
                        lambda: runs, step=lambda s: conn.process_data_events(time_limit=s))
    finally:
        conn.close()
    return {
        "framework": {"name": "pika", "version": pika.__version__},
        "description": describe + " The consumer on orders.process (x-dead-letter-exchange orders.dlx) rejects it with "
                                  "basic_reject(requeue=False); the broker dead-letters it to orders.process.parking-lot.",
        "parking_lot": parking_lot,
        "consumed_from": queue,
        "published_to": {"exchange": exchange, "routing_key": routing_key},
        "handler_runs": runs,
        "error": None,
        "id": None,
        "flow": [
            "basic_publish to orders / order.created → orders.process",
            "basic_reject(requeue=False) → dead-lettered (reason rejected) to orders.dlx → orders.process.parking-lot",
        ],
    }


def pika_protobuf():
    import importlib
    import os
    import subprocess
    import tempfile

    import google.protobuf
    import pika
    from google.protobuf import any_pb2

    here = os.path.dirname(os.path.abspath(__file__))
    out = tempfile.mkdtemp()
    subprocess.run(["protoc", "-I", os.path.join(here, "schemas", "producer"), "--python_out", out, "shop.proto"], check=True)
    sys.path.insert(0, out)
    shop = importlib.import_module("shop_pb2")
    order = shop.Order(order_id="4711", amount=1200.5, status=shop.STATUS_REFUSED, customer_id=9007199254740993,
                       signature=b"\x00\x9f\xfe", channel="web")
    order.items.add(sku="A-1", qty=2, price_cents=50025)
    order.items.add(sku="B-7", qty=1, price_cents=19999)
    order.labels["tenant"] = "acme"
    order.card.last4 = "4242"
    order.created_at.FromSeconds(1765000000)
    order.timeout.FromSeconds(90)
    att = any_pb2.Any()
    att.Pack(shop.Invoice(number="INV-77"))
    order.attachment.CopyFrom(att)
    meta = pika_park(order.SerializeToString(),
                     pika.BasicProperties(content_type="application/x-protobuf; messageType=shop.Order", delivery_mode=2),
                     "pika publishes a shop.Order serialised by python3-protobuf (protoc-generated from "
                     "schemas/producer/shop.proto, which has a field 13 'channel' that schemas/shop.proto lacks) with "
                     "content_type 'application/x-protobuf; messageType=shop.Order'.")
    meta["framework"]["protobuf"] = google.protobuf.__version__
    meta["decoded"] = {
        "order_id": "4711", "amount": 1200.5, "status": "STATUS_REFUSED", "customer_id": 9007199254740993,
        "items": [{"sku": "A-1", "qty": 2, "price_cents": 50025}, {"sku": "B-7", "qty": 1, "price_cents": 19999}],
        "labels": {"tenant": "acme"}, "card": {"last4": "4242"}, "created_at": "2025-12-06T05:46:40Z",
        "timeout": "90s", "attachment": {"@type": "type.googleapis.com/shop.Invoice", "number": "INV-77"},
        "signature": "AJ/+",
    }
    meta["unknown_fields"] = {"channel": "web"}
    return meta


def pika_avro_confluent():
    import datetime
    import decimal
    import io
    import os
    import struct

    import avro.io
    import avro.schema
    import pika

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "schemas", "payment.avsc")) as f:
        schema = avro.schema.parse(f.read())
    payment = {
        "payment_id": "PAY-1", "order_id": "4711", "amount": decimal.Decimal("1200.50"), "currency": "EUR",
        "paid_at": datetime.datetime(2025, 12, 6, 5, 46, 40, 123000, tzinfo=datetime.timezone.utc),
        "note": "card declined", "tags": ["retry", "vip"], "attempts": {"card": 3},
        "payer": {"customer_id": 77, "vip": True},
    }
    buf = io.BytesIO()
    buf.write(b"\x00" + struct.pack(">I", 7))  # Confluent wire format: magic byte, schema id
    avro.io.DatumWriter(schema).write(payment, avro.io.BinaryEncoder(buf))
    meta = pika_park(buf.getvalue(), pika.BasicProperties(content_type="avro/binary", delivery_mode=2),
                     "pika publishes a shop.Payment written by python3-avro (DatumWriter, BinaryEncoder) with "
                     "schemas/payment.avsc, framed in the Confluent wire format as schema id 7, content_type avro/binary.")
    meta["framework"]["avro"] = getattr(avro, "__version__", "python3-avro")
    meta["decoded"] = {
        "payment_id": "PAY-1", "order_id": "4711", "amount": 1200.5, "currency": "EUR",
        "paid_at": "2025-12-06T05:46:40.123Z", "note": "card declined", "tags": ["retry", "vip"],
        "attempts": {"card": 3}, "payer": {"customer_id": 77, "vip": True},
    }
    return meta


def main():
    lib.deadline(60)
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    run = {"kombu-msgpack-zlib": kombu_msgpack_zlib, "pika-gzip-json": pika_gzip_json,
           "pika-protobuf": pika_protobuf, "pika-avro-confluent": pika_avro_confluent}.get(which)
    if run is None:
        sys.exit(f"bodies_scenario.py: no scenario {which!r}")
    lib.write_meta(run())


if __name__ == "__main__":
    main()
