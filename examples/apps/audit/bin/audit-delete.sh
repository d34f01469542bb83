#!/bin/sh
# Prints the id of a deleted account, taken from the event's old_image without a JSON tool.
set -eu
event=$(cat)
id=$(printf '%s' "$event" | sed -n 's/.*"old_image" *: *{[^}]*"id" *: *"\([^"]*\)".*/\1/p')
printf 'AUDIT account %s deleted (%s)\n' "${id:-unknown}" "${RELAY_INVOCATION_ID:-manual}"
