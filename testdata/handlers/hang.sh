#!/bin/sh
# Never finishes: starts a child that would outlive a naive kill, records
# both pids in $1, and waits.
sleep 1000 &
echo "$!" >"$1.tmp"
echo "$$" >>"$1.tmp"
mv "$1.tmp" "$1"
echo "still working" >&2
wait
