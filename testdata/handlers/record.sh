#!/bin/sh
# Records each message it handles: appends PARKINGLOT_MESSAGE_ID to $1 as
# one line (one short O_APPEND write: lines of handlers running at once
# never interleave) and exits 0, so the daemon acks it. A test counts the
# ids it finds twice: a message handled again after its ack.
printf '%s\n' "$PARKINGLOT_MESSAGE_ID" >>"$1"
