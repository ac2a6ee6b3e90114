"""Shared by the Python scenarios: names with the recorder's suffix, bounded
waits, the meta file recorder.py reads. Debian's python3 (python3-pika,
python3-kombu, python3-celery) runs them."""

import json
import os
import signal
import sys
import time

SUFFIX = os.environ.get("SUFFIX")
META_OUT = os.environ.get("META_OUT")
if not SUFFIX or not META_OUT:
    sys.exit("run me through recorder.py (SUFFIX and META_OUT unset)")
AMQP_URL = os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")

# The order every scenario publishes; it names no queue or exchange (the
# recorder renames names, never bodies).
ORDER = {"orderId": 1042, "amount": "19.99", "currency": "EUR"}
ERROR_TEXT = "order 1042: payment service unavailable"


def name(base):
    """name('orders.process') is 'orders.process-<suffix>'; recorder.py renames it back."""
    return f"{base}-{SUFFIX}"


def deadline(seconds=60):
    """The whole scenario is bounded: SIGALRM's default action ends it."""
    signal.alarm(seconds)


def wait_for(what, fn, timeout=20.0, every=0.1, step=None):
    """Poll fn until it is true; step(every) runs the client's I/O meanwhile."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        (step or time.sleep)(every)


def wait_parked(depth, runs, step=None, settle=1.0):
    """Wait until the parking lot holds one message, then make sure the
    handler is done: the count of runs and the depth stay put a while."""
    wait_for("a message in the parking lot", lambda: depth() >= 1, step=step)
    n = runs()
    end = time.monotonic() + settle
    while time.monotonic() < end:
        (step or time.sleep)(0.1)
    d = depth()
    if d != 1 or runs() != n:
        raise RuntimeError(f"not settled: {d} parked, handler ran {n} then {runs()} times")


def write_meta(meta):
    with open(META_OUT, "w") as f:
        json.dump(meta, f, indent=2)
