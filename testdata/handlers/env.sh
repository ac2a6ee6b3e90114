#!/bin/sh
# Writes the handler's environment to $1 and its stdin to $2.
env >"$1"
cat >"$2"
