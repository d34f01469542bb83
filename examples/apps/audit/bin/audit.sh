#!/bin/sh
# Prints one audit line per privileged change: who (the invocation id names message, app and
# handler), which attempt, and the event itself (cut to 400 bytes).
set -eu
event=$(cat)
printf 'AUDIT %s attempt=%s event=%.400s\n' \
  "${RELAY_INVOCATION_ID:-manual}" "${RELAY_ATTEMPT:-1}" "$event"
