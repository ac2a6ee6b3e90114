#!/usr/bin/python3
"""celery-retries scenario, run through recorder.py.

A Celery app on the RabbitMQ broker (amqp://, no result backend) whose task
queue orders.process is a kombu Queue with queue_arguments
x-dead-letter-exchange orders.dlx (a fanout bound to the parking lot). The
task (acks_late) fails and calls self.retry(countdown=0.2) up to
max_retries=3; past that it raises Reject(requeue=False), so the worker
rejects the message and the broker dead-letters it to the parking lot.

The worker runs in this process (solo pool) in the main thread; a watcher
thread waits (bounded) for the parked message, then sends this process
SIGTERM, Celery's warm shutdown.
"""

import os
import signal
import threading

import celery
import kombu
from celery import Celery
from celery.exceptions import Reject
from celery.signals import before_task_publish
from kombu import Connection, Exchange, Queue

import scenario_lib as lib

MAX_RETRIES = 3

exchange = Exchange(lib.name("orders"), "direct", durable=True)
dlx = Exchange(lib.name("orders.dlx"), "fanout", durable=True)
routing_key = "orders.process"
queue = Queue(lib.name("orders.process"), exchange, routing_key=routing_key,
              queue_arguments={"x-dead-letter-exchange": dlx.name})
parking_lot = Queue(lib.name("orders.process.parking-lot"), dlx, routing_key="")

app = Celery("orders", broker=lib.AMQP_URL, set_as_current=True)
app.conf.update(
    result_backend=None,
    task_ignore_result=True,
    task_queues=[queue],
    task_default_queue=queue.name,
    task_default_exchange=exchange.name,
    task_default_routing_key=routing_key,
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    # Nothing but the task queue on the broker: no pidbox, no events.
    worker_enable_remote_control=False,
    worker_send_task_events=False,
    task_send_sent_event=False,
    broker_connection_retry_on_startup=False,
    broker_connection_timeout=10,
    worker_hijack_root_logger=False,
)


class PaymentUnavailable(Exception):
    pass


runs = 0
publishes = []  # (exchange, routing_key, retries) as Celery hands them to kombu


@before_task_publish.connect
def on_publish(sender=None, exchange=None, routing_key=None, headers=None, **_):
    publishes.append((exchange, routing_key, (headers or {}).get("retries")))


@app.task(bind=True, name="orders.charge", max_retries=MAX_RETRIES, acks_late=True)
def charge(self, order):
    global runs
    runs += 1
    try:
        raise PaymentUnavailable(lib.ERROR_TEXT)  # the order service is down
    except PaymentUnavailable as exc:
        if self.request.retries >= self.max_retries:
            raise Reject(exc, requeue=False)  # park: dead-lettered to orders.dlx
        raise self.retry(exc=exc, countdown=0.2)


def main():
    lib.deadline(90)
    with Connection(lib.AMQP_URL, connect_timeout=10) as conn:
        parking_lot(conn.default_channel).declare()
        probe = conn.channel()

        def depth():
            return probe.queue_declare(queue=parking_lot.name, passive=True).message_count

        result = charge.apply_async(args=[lib.ORDER])
        failure = []

        def watch():
            try:
                lib.wait_parked(depth, lambda: runs, settle=1.5)
            except Exception as e:  # noqa: BLE001 - reported by main
                failure.append(e)
            os.kill(os.getpid(), signal.SIGTERM)  # Celery's warm shutdown

        threading.Thread(target=watch, daemon=True).start()
        worker = app.Worker(pool="solo", concurrency=1, loglevel="WARNING", quiet=True,
                            without_heartbeat=True, without_mingle=True, without_gossip=True,
                            hostname="worker@recorder")
        try:
            worker.start()
        except SystemExit:
            pass
        if failure:
            raise failure[0]
        if len(publishes) != MAX_RETRIES + 1:
            raise RuntimeError(f"Celery published {publishes}, want {MAX_RETRIES + 1} sends")
        parked = depth()
        if parked != 1:
            raise RuntimeError(f"{parked} messages parked, want 1")

    lib.write_meta({
        "framework": {"name": "celery", "version": celery.__version__, "kombu": kombu.__version__,
                      "transport": transport_version()},
        "description": (
            "Celery app (broker amqp://, no result backend, remote control and events off) with task_queues=[kombu Queue "
            "orders.process on the direct exchange orders, routing key orders.process, queue_arguments "
            "x-dead-letter-exchange orders.dlx]. Task orders.charge (bind=True, acks_late=True, max_retries=3) fails and "
            "raises self.retry(exc=exc, countdown=0.2); each retry is a new message published by the worker with the same "
            "task id and retries raised by one (and an eta). Celery publishes a task for a queue on a direct exchange to the "
            "default exchange with the queue name as routing key, first send and retries alike, so x-death names exchange ''. The fourth run, at "
            "request.retries == 3, raises Reject(exc, requeue=False): the worker basic_rejects the message and the broker "
            "dead-letters it through the fanout orders.dlx to orders.process.parking-lot. Celery writes no error into the "
            "message; its task protocol 2 headers (id, task, retries, eta, root_id, parent_id, origin, …) and "
            "correlation_id = task id come along."),
        "parking_lot": parking_lot.name,
        "consumed_from": queue.name,
        "published_to": {"exchange": publishes[0][0], "routing_key": publishes[0][1]},
        "handler_runs": runs,
        "error": lib.ERROR_TEXT,
        "id": result.id,
        "flow": [
            f"charge.apply_async(args=[order]) → exchange {publishes[0][0]!r} / {publishes[0][1]} (task protocol 2, "
            "id = correlation_id; Celery sends to the default exchange, routing key = queue name, when the queue's exchange is "
            "direct) → orders.process",
            f"runs 1 to {MAX_RETRIES}: PaymentUnavailable → self.retry(countdown=0.2): a copy with retries 1..{MAX_RETRIES} and an eta "
            "is published (" + ", ".join(sorted({f"exchange {e!r} / {k}" for e, k, _ in publishes[1:]})) + ") and the delivery is acked",
            f"run {MAX_RETRIES + 1} (retries {MAX_RETRIES}): Reject(requeue=False) → basic_reject → dead-lettered (reason rejected) to "
            "orders.dlx → orders.process.parking-lot",
        ],
    })


def transport_version():
    import amqp  # py-amqp, kombu's transport for amqp://
    return f"py-amqp {amqp.__version__}"


if __name__ == "__main__":
    main()
