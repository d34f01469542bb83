#pragma once

#include "redis/script.h"

namespace relay::invocation {

/// The Lua scripts of the lifecycle verbs (docs/pipeline.md "Scripts"). Each takes all its keys
/// as KEYS (Redis Cluster: one slot with a hash-tagged stream), reads the time with TIME (one
/// clock for every replica), checks `relay:retained` so a stale delivery is inert, and fences
/// on the claim token. Replies are decoded in one place: lifecycle_replies.cpp.
struct LifecycleScripts {
  /// KEYS: state, due, attempts (the message's journal), stream, paused (the group's paused
  /// apps), paused queue, clock, legacy paused (the stream-wide set of earlier Relays). ARGV:
  /// candidate plan, runnable mask (a Runnability letter per plan entry: r, s, n), token, grace-ms,
  /// lease-ms, margin-ms, message-id, the started record of a new claim ("": none), retention-ms,
  /// group, consumer, parking consumer, backoff table (comma-separated ms), retry-elsewhere-ms,
  /// outage-gap-ms, takeover-grace-ms, the candidate's limits (plan.h encodeLimits). Returns
  /// {run, index, attempt, journal-failed} | {busy, index, attempt} | {slot, index} | {pending,
  /// until-ms, paused-app...} | {done} | {owes, index, attempt, exhausted|expired|cancelled,
  /// ...} | {replan, plan, limits} |
  /// {retained} | {gone} | {elsewhere, owner} | {corrupt, field, text}.
  redis::Script start;
  /// KEYS: state. ARGV: field, token. Returns running | lost | retained.
  redis::Script begin;
  /// KEYS: clock. ARGV: outage-gap-ms, takeover-grace-ms. Returns Redis's time (ms).
  redis::Script heartbeat;
  /// KEYS: state, due, stream, dlq, stats, attempts. ARGV: field, token,
  /// succeeded|failed|cancelled,
  /// retry-delay-ms, retention-ms, group, message-id, duration-seconds, exit reason, output
  /// tail, the finished record's journal field ("": none) and value, then the DLQ entry's
  /// field/value pairs when the last attempt failed.
  /// Returns {succeeded|failed|exhausted|cancelled|stale|retained, acked, dlq-written,
  /// stats-failures, journal-failed}.
  redis::Script complete;
  /// KEYS: state, due, attempts. ARGV: field (empty: whichever the token holds), token,
  /// retry-after-ms, message-id, unjournal (1: the released attempt's record goes).
  /// Returns released | not_held | retained.
  redis::Script release;
  /// KEYS: state, stream. ARGV: field, token, extend-ms, group, consumer, message-id.
  /// Returns renewed | lost | retained.
  redis::Script renew;
  /// KEYS: state, dlq, stream, due, stats. ARGV: field, retention-ms, group, message-id, then
  /// the entry's field/value pairs. Returns {written|exists|stale|retained, acked,
  /// stats-failures} or {planned, plan}.
  redis::Script write_dlq;
  /// Any number of messages: KEYS: stream, due, then each message's state. ARGV: group,
  /// retention-ms, then each message's id and obsolete-occurrence (1|0), in the order of KEYS.
  /// Returns two elements per message, in order: acked, "" | unresolved, plan | retained, "".
  redis::Script acknowledge;
  /// KEYS: stream, state, due. ARGV: group, message-id, retention-ms. Returns cleared | retained.
  redis::Script clear_missing;
  /// KEYS: attempts (the message's journal). ARGV: field, record, retention-ms. Returns OK, or
  /// an error when the record cannot be written.
  redis::Script journal;
  /// KEYS: state, due, stream, cancels, paused queue. ARGV: message-id, target (`*`,
  /// `<app>/*`, `<app>/<handler>`), dead-letter (1|0), cancel-id, group, retention-ms. Returns
  /// {finished} | {missing} | {requested} | {applied|acked, then field, what, token per
  /// invocation named}, what being cancelled | running | orphaned | finished.
  redis::Script cancel;

  /// The one set every store of the process shares, built (and hashed) on first use. A set per
  /// store cost each new thread ~200 KB of SHA-1 and copies: a third of an idle worker's RSS.
  static const LifecycleScripts& shared();

 private:
  LifecycleScripts();  // only shared() builds one
};

}  // namespace relay::invocation
