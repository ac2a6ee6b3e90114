#!/usr/bin/python3
"""kombu-reject scenario, run through recorder.py.

kombu Exchange/Queue declarations: orders.process is bound to the topic
exchange orders with queue_arguments x-dead-letter-exchange orders.dlx (a
fanout bound to the parking lot). A kombu Consumer's callback fails: on the
first delivery it calls message.requeue() (one more try), on the redelivery
message.reject() (requeue False), so the broker dead-letters it.
"""

import socket

import kombu
from kombu import Connection, Consumer, Exchange, Producer, Queue

import scenario_lib as lib


def main():
    lib.deadline(60)
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
        try:
            raise RuntimeError(lib.ERROR_TEXT)  # the order service is down
        except RuntimeError:
            if not message.delivery_info.get("redelivered"):
                message.requeue()  # one more try
            else:
                message.reject()  # requeue=False: dead-lettered to orders.dlx

    with Connection(lib.AMQP_URL, connect_timeout=10) as conn:
        channel = conn.channel()
        parking_lot(channel).declare()
        producer = Producer(channel, serializer="json")
        producer.publish(lib.ORDER, exchange=exchange, routing_key=routing_key, declare=[queue], retry=False)

        probe = conn.channel()

        def depth():
            return probe.queue_declare(queue=parking_lot.name, passive=True).message_count

        def step(seconds):
            try:
                conn.drain_events(timeout=seconds)
            except socket.timeout:
                pass

        with Consumer(conn.channel(), queues=[queue], callbacks=[on_message], prefetch_count=1):
            lib.wait_parked(depth, lambda: runs, step=step)

    lib.write_meta({
        "framework": {"name": "kombu", "version": kombu.__version__, "transport": transport_version()},
        "description": (
            "kombu Producer(serializer='json') publishes to the topic exchange orders / order.created; a kombu Consumer "
            "on Queue orders.process (queue_arguments x-dead-letter-exchange orders.dlx) fails, calls message.requeue() "
            "on the first delivery and message.reject() on the redelivery; the broker dead-letters it through the "
            "fanout orders.dlx to orders.process.parking-lot. kombu writes only its serializer's properties "
            "(content_type application/json, content_encoding utf-8, delivery_mode 2) and no headers or message id of its own."),
        "parking_lot": parking_lot.name,
        "consumed_from": queue.name,
        "published_to": {"exchange": exchange.name, "routing_key": routing_key},
        "handler_runs": runs,
        "error": lib.ERROR_TEXT,
        "id": None,
        "flow": [
            "Producer.publish({...}, exchange=orders, routing_key=order.created, declare=[orders.process]) → orders.process",
            "delivery 1: the callback fails, message.requeue()",
            "delivery 2 (redelivered): the callback fails, message.reject() (requeue False)",
            "the broker dead-letters it (reason rejected) to orders.dlx (fanout) → orders.process.parking-lot",
        ],
    })


def transport_version():
    import amqp  # py-amqp, kombu's pyamqp:// transport
    return f"py-amqp {amqp.__version__}"


if __name__ == "__main__":
    main()
