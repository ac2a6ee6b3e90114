#!/bin/sh
# A permanent failure: exit 65 (EX_DATAERR).
echo "bad payload: expected JSON" >&2
exit 65
