#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "invocation/keys.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "stream/throughput_recorder.h"
#include "stream/trimmer.h"
#include "worker/redis_chore.h"

namespace relay::worker {

/// How often the housekeeper looks at Redis. Fixed internals: tests shorten them.
struct HousekeepingSettings {
  /// The pending-messages gauge and whether the consumer group exists (/readyz).
  std::chrono::milliseconds refresh_interval{5'000};
  /// Retention (REDIS_STREAM_RETENTION, REDIS_DLQ_RETENTION).
  std::chrono::milliseconds retention_interval{60'000};
  /// This worker's heartbeat key lives this long after each refresh (several refreshes).
  std::chrono::milliseconds heartbeat_ttl{15'000};
  /// The consumer name the heartbeat is written under; empty: no heartbeat.
  std::string consumer;
  /// What the heartbeat holds (JSON: runtime, HTTP address, start time...).
  std::string heartbeat;
};

/// What the housekeeper last learned about the consumer group.
struct GroupState {
  bool checked = false;  // false until the first refresh answered (or failed)
  bool exists = false;
  std::string problem;  // why it does not exist or could not be checked
};

/// Keeps what the HTTP endpoints report current without making them wait on Redis: refreshes
/// relay_pending_messages and the group's existence every refresh interval, flushes the
/// per-minute throughput counters and this worker's heartbeat key (`relay:<stream>:worker:
/// <group>:<consumer>`, which `relay console` reads as the consumer's health) as often (the
/// counters once more when it stops, the heartbeat deleted then), and applies
/// retention every retention interval (the first pass right at start). One thread with its own
/// connection, reconnecting on the next round after a failure.
class Housekeeper {
 public:
  Housekeeper(HousekeepingSettings settings, redis::Endpoint endpoint, invocation::StreamKeys keys,
              stream::Trimmer& trimmer, stream::ThroughputRecorder& throughput,
              observability::Metrics& metrics, observability::Logger& logger, Clock& clock);
  /// Stops and joins the thread.
  ~Housekeeper();
  Housekeeper(const Housekeeper&) = delete;
  Housekeeper& operator=(const Housekeeper&) = delete;

  /// Starts the thread. Call at most once.
  void start();
  /// Ends the thread (within one stop check) and joins it. Thread-safe, idempotent.
  void stop();

  /// One refresh on the caller's connection: XPENDING summary (the gauge; NOGROUP means the
  /// group is missing).
  void refreshOnce(redis::Connection& redis);

  /// Thread-safe snapshot of the last refresh.
  GroupState groupState() const;

 private:
  /// One round on the chore's connection: refresh, throughput, heartbeat, retention when due.
  void round(redis::Connection& redis);
  /// After the stop: the last counters flushed, the heartbeat deleted.
  void last(redis::Connection& redis);
  void setGroupState(GroupState state);

  HousekeepingSettings settings_;
  invocation::StreamKeys keys_;
  stream::Trimmer& trimmer_;
  stream::ThroughputRecorder& throughput_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  mutable std::mutex mutex_;
  GroupState group_;
  MonoTime next_trim_{};  // the chore's thread only; the first round trims
  RedisChore chore_;      // last: its thread ends before the members it uses
};

}  // namespace relay::worker
