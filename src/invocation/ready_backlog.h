#pragma once

#include <cstddef>
#include <cstdint>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace relay::invocation {

/// The messages a worker could start now: the signal an autoscaler needs (docs/operations.md
/// "Ready backlog"). Stream lag and XPENDING both count retries that wait minutes for their
/// backoff and messages held by a paused app, so neither is it.
struct ReadyBacklog {
  std::int64_t lag = 0;              // entries not yet delivered to the group
  std::int64_t pending = 0;          // the group's PEL, every consumer
  std::int64_t parked = 0;           // of those, held by the parking consumer (relay:parked)
  std::int64_t waiting_backoff = 0;  // parked, next attempt later than now (due index)
  std::int64_t waiting_pause = 0;    // parked, neither due later nor due now: a paused app
  /// Lag counted by XRANGE (Redis could not tell it), up to the scan limit.
  bool lag_counted = false;

  std::int64_t ready() const {
    const std::int64_t ready = lag + pending - waiting_backoff - waiting_pause;
    return ready < 0 ? 0 : ready;
  }
};

/// Fixed internals; tests make the scan small.
struct ReadyBacklogSettings {
  /// Undelivered entries counted when Redis has no lag (entries deleted in the undelivered
  /// range), per read.
  std::size_t scan_limit = 1000;
};

/// Reads the ready backlog of `keys.group` from what Redis holds, in one script: XINFO GROUPS
/// (lag, pending), XINFO CONSUMERS (what the parking consumer holds: the messages waiting on an
/// index, docs/pipeline.md "Waiting") and the due index on both sides of Redis TIME. Blocks for
/// one round trip (two when the lag must be counted). kNotFound when the group does not exist.
class ReadyBacklogReader {
 public:
  explicit ReadyBacklogReader(StreamKeys keys, ReadyBacklogSettings settings = {});
  Result<ReadyBacklog> read(redis::Connection& redis) const;

 private:
  StreamKeys keys_;
  ReadyBacklogSettings settings_;
  redis::Script counts_;
};

}  // namespace relay::invocation
