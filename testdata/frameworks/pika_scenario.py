#!/usr/bin/python3
"""pika-reject scenario, run through recorder.py.

orders.process has x-dead-letter-exchange orders.dlx (fanout, bound to the
parking lot). The pika consumer counts its own attempts in an x-retry-count
header: a failed attempt is published again to the queue (default exchange,
routing key = the queue, the usual pika retry) with the count raised, and
acked; the third failure is rejected with basic_reject(requeue=False) and the
broker dead-letters it to the parking lot.
"""

import json

import pika

import scenario_lib as lib

MAX_ATTEMPTS = 3


def main():
    lib.deadline(60)
    exchange = lib.name("orders")
    dlx = lib.name("orders.dlx")
    queue = lib.name("orders.process")
    parking_lot = lib.name("orders.process.parking-lot")
    routing_key = "order.created"

    params = pika.URLParameters(lib.AMQP_URL)
    params.socket_timeout = 10
    params.blocked_connection_timeout = 10
    conn = pika.BlockingConnection(params)
    try:
        ch = conn.channel()
        ch.confirm_delivery()
        ch.exchange_declare(exchange, "topic", durable=True)
        ch.exchange_declare(dlx, "fanout", durable=True)
        ch.queue_declare(queue, durable=True, arguments={"x-dead-letter-exchange": dlx})
        ch.queue_bind(queue, exchange, routing_key)
        ch.queue_declare(parking_lot, durable=True)
        ch.queue_bind(parking_lot, dlx, "")

        runs = 0

        def on_message(ch, method, props, body):
            nonlocal runs
            runs += 1
            retries = (props.headers or {}).get("x-retry-count", 0)
            try:
                raise RuntimeError(lib.ERROR_TEXT)  # the order service is down
            except RuntimeError:
                if retries + 1 < MAX_ATTEMPTS:
                    props.headers = dict(props.headers or {}, **{"x-retry-count": retries + 1})
                    ch.basic_publish("", queue, body, props)
                    ch.basic_ack(method.delivery_tag)
                else:
                    ch.basic_reject(method.delivery_tag, requeue=False)

        ch.basic_qos(prefetch_count=1)
        ch.basic_consume(queue, on_message)
        ch.basic_publish(exchange, routing_key, json.dumps(lib.ORDER).encode(),
                         pika.BasicProperties(content_type="application/json", delivery_mode=2))

        probe = conn.channel()
        lib.wait_parked(lambda: probe.queue_declare(parking_lot, passive=True).method.message_count,
                        lambda: runs, step=lambda s: conn.process_data_events(time_limit=s))
    finally:
        conn.close()

    lib.write_meta({
        "framework": {"name": "pika", "version": pika.__version__},
        "description": (
            "pika BlockingConnection consumer on orders.process (x-dead-letter-exchange orders.dlx). It counts its own "
            "attempts in an x-retry-count header: a failed attempt is published again to the default exchange / "
            f"orders.process with x-retry-count raised by one, then acked; attempt {MAX_ATTEMPTS} is rejected with "
            "basic_reject(requeue=False) and the broker dead-letters it through the fanout orders.dlx to "
            "orders.process.parking-lot. pika writes nothing of its own; x-death names the default exchange and the "
            "queue as routing key (the last hop), not orders / order.created."),
        "parking_lot": parking_lot,
        "consumed_from": queue,
        "published_to": {"exchange": exchange, "routing_key": routing_key},
        "handler_runs": runs,
        "error": lib.ERROR_TEXT,
        "id": None,
        "flow": [
            "producer basic_publish to orders / order.created (content_type application/json, delivery_mode 2, no message_id) → orders.process",
            "attempts 1 and 2 fail: basic_publish to the default exchange / orders.process with x-retry-count 1, 2; basic_ack",
            f"attempt {MAX_ATTEMPTS} fails: basic_reject(requeue=False) → dead-lettered (reason rejected) to orders.dlx → orders.process.parking-lot",
        ],
    })


if __name__ == "__main__":
    main()
