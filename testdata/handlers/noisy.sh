#!/bin/sh
# Prints 4 MiB to stderr (one long line), then the line that matters.
head -c 4194304 /dev/zero | tr '\0' 'x' >&2
printf '\nthe real error\n\n' >&2
exit 3
