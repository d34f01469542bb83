#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace relay::invocation {

/// Names of every Relay-owned key of one stream and group (docs/pipeline.md "State in Redis"). All
/// start with `relay:<stream>:`, so a hash-tagged stream (`{events}`) keeps them in the stream's
/// slot.
struct StreamKeys {
  std::string stream;
  std::string group;

  /// `relay:<stream>:inv:<group>:<message-id>`: the per-message invocation state hash.
  std::string state(std::string_view message_id) const;
  /// `relay:<stream>:dlq`
  std::string dlq() const;
  /// `relay:<stream>:stats`
  std::string stats() const;
  /// `relay:<stream>:due:<group>`: the due-retry index, a sorted set of message ids scored by
  /// the earliest next_attempt_at (Redis time, ms) of their failed invocations.
  std::string due() const;
  /// `relay:<stream>:apps:<group>:<app>`: the app's last valid template as a worker of this
  /// group loaded it, for a worker of the group started while its local template is invalid.
  /// Per group: two groups on one stream are two deployments, each with its own templates.
  std::string appTemplate(std::string_view app) const;
  /// `relay:<stream>:apps:<app>`: where Relay kept templates per stream before they were kept
  /// per group; read when the group's own key is missing, for one release (docs/apps.md).
  std::string legacyAppTemplate(std::string_view app) const;
  /// `relay:<stream>:paused:<group>`: the set of paused apps (paused_apps.h reads and writes
  /// it); per group, since two groups on one stream are two deployments.
  std::string paused() const;
  /// `relay:<stream>:paused`: the stream-wide set of earlier Relays, still honoured (an app in
  /// it is paused for every group) until it is resumed.
  std::string legacyPaused() const;
  /// `relay:<stream>:paused-queue:<group>`: the messages parked for a paused app, a sorted set
  /// of `<app>\n<message-id>` (all scores 0: read by prefix), moved to the due index on resume.
  std::string pausedQueue() const;
  /// `relay:<stream>:clock:<group>`: when Redis was last seen serving the workers (`seen`) and
  /// when it was last seen again after a gap (`resumed`), in Redis time (docs/pipeline.md
  /// "Outages"): expired claims are not taken over right after an outage.
  std::string clock() const;
  /// `relay:<stream>:` itself, for SCANs and docs.
  std::string prefix() const;
  /// `relay:<stream>:minute:<unix-minute>`: the per-minute counters every worker adds to.
  std::string minute(std::int64_t unix_minute) const;
  /// `relay:<stream>:worker:<group>:<consumer>`: a live worker's heartbeat (expires on its own).
  std::string heartbeat(std::string_view consumer) const;
  /// `relay:<stream>:attempts:<group>:<message-id>`: the attempt journal of one message.
  std::string attempts(std::string_view message_id) const;
  /// `relay:<stream>:group:<group>`: where the consumer group stood (`last_delivered`, kept by
  /// every worker's housekeeper), so a destroyed group is re-created there and not at 0.
  std::string groupRecord() const;
  /// `relay:<stream>:flow:<group>:<kind>:<scope>[:<value>]`: the state of one flow gate
  /// (docs/pipeline.md "Flow control"): `throttle` (per scope), and per key value `run` (its
  /// running claims), `wait` (its queue), `latest` (a singleton's newest event), `dedupe`,
  /// `debounce`.
  std::string flow(std::string_view kind, std::string_view scope,
                   std::string_view value = {}) const;
  /// `relay:<stream>:cancels:<group>`: the stream every worker watches for running attempts to
  /// stop (docs/pipeline.md "Cancellation"): `id`, `field`, `token`, `cancel` per entry.
  std::string cancels() const;
  /// `relay:<stream>:replays:<group>`: sorted set of replay ids by creation time (ms).
  std::string replays() const;
  /// `relay:<stream>:replay:<group>:<id>`: one replay's definition, cursor, progress and lease
  /// (docs/replay.md "State in Redis").
  std::string replay(std::string_view id) const;
  /// `relay:<stream>:replay-copies:<group>:<id>`: hash, original id -> the copy's id: a copy is
  /// published once per (replay, original) whoever drives the replay.
  std::string replayCopies(std::string_view id) const;
  /// `relay:<stream>:archive:<group>`: the stream-wide archive (docs/replay.md "Archive").
  std::string archive() const;
  /// `relay:<stream>:archive:<group>:<app>`: an app's archive.
  std::string appArchive(std::string_view app) const;
  /// `relay:<stream>:archiver:<group>`: hash, the archiver's cursor and lease.
  std::string archiver() const;
  /// `relay:<stream>:retention`: hash, the retentions the workers apply and how far they trimmed,
  /// so that a replay can say which retention removed the entries it misses.
  std::string retention() const;
};

/// The state-hash field of one invocation: `<app>/<handler>`.
std::string invocationField(std::string_view app, std::string_view handler);

/// The consumer of the group that holds, in the PEL, the messages waiting on an index (a retry's
/// backoff, a paused app, a worker that can run them): nothing reclaims from it, the pollers
/// take its messages back when they are due (docs/pipeline.md "Waiting").
inline constexpr std::string_view kParkingConsumer = "relay:parked";

/// The field and app/handler names of a malformed message's DLQ bookkeeping (`-/-`).
inline constexpr std::string_view kMalformedField = "-/-";
/// The reserved field that marks a state hash as retained (its message left the PEL).
inline constexpr std::string_view kRetainedField = "relay:retained";
/// The reserved field holding the message's plan (plan.h), recorded at its first execution.
inline constexpr std::string_view kPlanField = "relay:plan";
/// Prefixes of the reserved per-invocation fields `relay:reason:<app>/<handler>` and
/// `relay:tail:<app>/<handler>`: the exit reason and output tail of its last failed attempt.
inline constexpr std::string_view kReasonPrefix = "relay:reason:";
inline constexpr std::string_view kTailPrefix = "relay:tail:";
/// Prefix of the reserved field `relay:deferrals:<app>/<handler>`: how many times its handler
/// deferred itself with a retry-after (docs/runtimes.md "Retry-after").
inline constexpr std::string_view kDeferralsPrefix = "relay:deferrals:";
/// The reserved field `relay:limits`: the plan's deadlines and start timeouts (plan.h).
inline constexpr std::string_view kLimitsField = "relay:limits";
/// Prefix of the cancellation requests of a message (docs/pipeline.md "Cancellation"):
/// `relay:cancel:<app>/<handler>`, `relay:cancel:<app>/*` (every handler of the app) and
/// `relay:cancel:*` (every invocation), each `<0|1> <cancel-id>` (1: dead-letter it).
inline constexpr std::string_view kCancelPrefix = "relay:cancel:";

}  // namespace relay::invocation
