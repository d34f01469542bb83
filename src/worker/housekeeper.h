#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "invocation/catalog.h"
#include "invocation/keys.h"
#include "invocation/ready_backlog.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "stream/idle_consumers.h"
#include "stream/pending_reason.h"
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
  /// How long a consumer of the group must idle, with nothing pending, before the housekeeper
  /// deletes it (every retention interval; never this worker's own, never one with pending).
  stream::IdleConsumers::Settings idle_consumers;
  /// The scans of the ready backlog (relay_ready_backlog).
  invocation::ReadyBacklogSettings backlog;
};

/// What the housekeeper last learned about the consumer group.
struct GroupState {
  bool checked = false;  // false until the first refresh answered (or failed)
  bool exists = false;
  std::string problem;  // why it does not exist or could not be checked
};

/// What the housekeeper last learned about the group's pending messages (docs/operations.md
/// "Pending messages"): /status and `relay health` show it, the metrics
/// relay_oldest_pending_age_seconds and relay_trim_held_back_seconds carry it.
struct StreamHealth {
  bool checked = false;  // false until the first inspection answered (or failed)
  std::string problem;   // why the last inspection failed; empty when it did not
  long long pending = 0;
  std::optional<stream::PendingReport> oldest;  // the group's oldest pending message
  std::chrono::milliseconds retention{0};       // REDIS_STREAM_RETENTION
  /// The pending entry that keeps retention from trimming older entries, and its group.
  std::optional<stream::PendingReport> held_back;
  std::string held_back_group;
};

/// Keeps what the HTTP endpoints report current without making them wait on Redis: refreshes
/// relay_pending_messages and the group's existence every refresh interval, flushes the
/// per-minute throughput counters and this worker's heartbeat key (`relay:<stream>:worker:
/// <group>:<consumer>`, which `relay console` reads as the consumer's health) as often (the
/// counters once more when it stops, the heartbeat deleted then), inspects the pending messages
/// (the oldest one and the one holding trimming back, with why they are pending), records the
/// group's position (a destroyed group is re-created there, stream/group_keeper.h) and reports
/// a re-creation, and applies retention every retention interval (the first pass right at
/// start). One thread with its own connection, reconnecting on the next round after a failure.
class Housekeeper {
 public:
  Housekeeper(HousekeepingSettings settings, redis::Endpoint endpoint, invocation::StreamKeys keys,
              stream::Trimmer& trimmer, stream::ThroughputRecorder& throughput,
              observability::Metrics& metrics, observability::Logger& logger, Clock& clock,
              invocation::Catalog* catalog = nullptr);
  /// Stops and joins the thread.
  ~Housekeeper();
  Housekeeper(const Housekeeper&) = delete;
  Housekeeper& operator=(const Housekeeper&) = delete;

  /// Starts the thread. Call at most once.
  void start();
  /// Ends the thread (within one stop check) and joins it. Thread-safe, idempotent.
  void stop();

  /// One refresh on the caller's connection: XPENDING summary (the gauge; NOGROUP means the
  /// group is missing) and the ready backlog (relay_ready_backlog).
  void refreshOnce(redis::Connection& redis);
  /// Deletes the group's idle consumers that hold nothing (IdleConsumers); how many.
  int deleteIdleConsumersOnce(redis::Connection& redis);

  /// One inspection on the caller's connection: every group's position (XINFO GROUPS,
  /// XPENDING), the group's position recorded, an unreported re-creation of the group logged,
  /// the oldest pending message and the one holding trimming back explained (a pipeline each),
  /// the metrics set. A few round trips, whatever the backlog.
  void inspectOnce(redis::Connection& redis);

  /// Thread-safe snapshot of the last refresh.
  GroupState groupState() const;
  /// Thread-safe snapshot of the last inspection.
  StreamHealth streamHealth() const;

 private:
  /// One round on the chore's connection: refresh, throughput, heartbeat, retention when due.
  void round(redis::Connection& redis);
  /// After the stop: the last counters flushed, the heartbeat deleted.
  void last(redis::Connection& redis);
  void setGroupState(GroupState state);
  /// Logs a re-creation of the group that no worker has reported yet (exactly one does).
  void reportRecreation(redis::Connection& redis);
  /// Logs when the entry holding trimming back changes (once per entry, not every refresh).
  void noteHoldback(const StreamHealth& health);

  HousekeepingSettings settings_;
  invocation::StreamKeys keys_;
  stream::Trimmer& trimmer_;
  stream::ThroughputRecorder& throughput_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  invocation::Catalog* catalog_;
  mutable std::mutex mutex_;
  GroupState group_;
  StreamHealth stream_;
  std::string held_back_id_;  // the chore's thread only: the entry last logged as holding back
  invocation::ReadyBacklogReader backlog_;
  stream::IdleConsumers idle_consumers_;
  MonoTime next_trim_{};  // the chore's thread only; the first round trims
  RedisChore chore_;      // last: its thread ends before the members it uses
};

}  // namespace relay::worker
