#!/bin/sh
# Example exec handler (and the daemon end-to-end test's): the body arrives
# on stdin. A body containing "poison" is permanent (exit 65: park now), one
# containing "fail" is transient (exit 1: retry); anything else is done.
# The last non-empty stderr line becomes x-last-error.
body=$(cat)
case "$body" in
*poison*)
	echo "cannot parse message $PARKINGLOT_MESSAGE_ID" >&2
	exit 65
	;;
*fail*)
	echo "working on $PARKINGLOT_MESSAGE_ID" >&2
	echo "db down (attempt $PARKINGLOT_ATTEMPT)" >&2
	exit 1
	;;
esac
exit 0
