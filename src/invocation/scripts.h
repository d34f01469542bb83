#pragma once

#include "redis/script.h"

namespace relay::invocation {

/// The Lua scripts of every atomic invocation transition (relay.md section 5). Each takes all
/// its keys as KEYS (Redis Cluster: one slot), checks the `relay:retained` marker first so a
/// stale delivery is inert once its message left the PEL, and fences on the claim token so a
/// stale claim can never overwrite newer state.
struct Scripts {
  /// KEYS: state. ARGV: field, now-ms, token, deadline-ms, max-attempts.
  /// Returns {verdict, attempt, detail}: run | busy | wait | succeeded | exhausted | dlq |
  /// retained | corrupt.
  redis::Script try_start;
  /// KEYS: state. ARGV: field, token, outcome (succeeded|failed), next-attempt-ms,
  /// max-attempts. Returns succeeded | failed | exhausted | stale | retained.
  redis::Script complete;
  /// KEYS: state. ARGV: field, token. Undoes a claim whose attempt never ran (the runtime was
  /// unavailable): returns released | stale | retained.
  redis::Script release;
  /// KEYS: state, dlq. ARGV: field, then DLQ entry field/value pairs. XADDs the entry and marks
  /// the invocation `...:dlq` in one step: written | exists | stale | retained.
  redis::Script write_dlq;
  /// KEYS: stream, state. ARGV: group, message-id, ttl-ms (0: keep forever). XACK, then the
  /// retained marker and TTL. Returns the XACK count.
  redis::Script ack_and_retain;

  Scripts();
};

}  // namespace relay::invocation
