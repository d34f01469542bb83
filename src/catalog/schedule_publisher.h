#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "app/registry.h"
#include "catalog/occurrence_publication.h"
#include "common/clock.h"
#include "common/stop_signal.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "redis/reconnect.h"
#include "schedule/occurrence.h"
#include "schedule/occurrence_planner.h"

namespace relay::catalog {

/// Fixed internals of schedule publication; tests shorten the waits through this struct.
struct PublisherSettings {
  std::string stream = "events";
  /// Lifetime of a dedupe key. Longer than the catch-up window, so a catch-up never publishes
  /// an occurrence again that another worker (or this one, before a restart) already did.
  std::chrono::milliseconds dedupe_ttl = kOccurrenceRecordTtl;
  std::chrono::minutes catch_up_window = std::chrono::hours(24);
  /// How long (in complete rounds' time) an occurrence this worker dealt with is rechecked, and
  /// at most how many per schedule (docs/schedules.md "Failover"): longer than a failover takes
  /// to be noticed and finished, so the first round on the new master sees what it lost.
  std::chrono::minutes recheck_window = std::chrono::minutes(10);
  std::size_t recheck_per_schedule = 10;
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5'000};
  /// The longest a waiting run() sleeps before it reads the wall clock again, so a clock set
  /// forward or back moves its next round within this (stop() ends a wait at once).
  std::chrono::milliseconds wall_check{10'000};
};

/// What one evaluation round did.
struct PublishRound {
  int published = 0;     // new stream entries
  int duplicates = 0;    // occurrences another worker (or an earlier round) had published
  int republished = 0;   // recent occurrences Redis had lost, published again
  bool complete = true;  // false: Redis failed and the round was abandoned
};

/// Publishes the occurrences of every loaded schedule to the stream (docs/schedules.md
/// "Publication"): each worker evaluates every schedule once a minute, and one Lua script per due
/// occurrence sets its dedupe key `relay:<stream>:occ:<app>:<schedule>:<scheduled-at>` and XADDs
/// only if the key was new, so N workers publish each occurrence exactly once. Each round first
/// checks with one EXISTS that the dedupe keys of the occurrences it dealt with recently are still
/// there, and publishes again the ones a failover undid (docs/schedules.md "Failover"). One per
/// worker, on its own thread.
class SchedulePublisher {
 public:
  SchedulePublisher(PublisherSettings settings, redis::Endpoint endpoint,
                    const app::Registry& registry, observability::Metrics& metrics,
                    observability::Logger& logger, Clock& clock);

  /// Evaluates every schedule at the top of each minute (by the Clock) until stop(),
  /// reconnecting with backoff when Redis fails; a round that failed is retried after the
  /// backoff, not a minute later. Blocks.
  void run();
  /// Asks run() to return. Thread-safe, non-blocking.
  void stop();

  /// One round at clock.now() on the caller's connection: evaluates every loaded schedule of
  /// the registry's current snapshot and publishes what is due. Stops at the first Redis error.
  /// Not thread-safe: one caller at a time (run(), or a test).
  PublishRound publishDue(redis::Connection& redis);

  /// Publishes one occurrence with its payload: the new entry's id, or nullopt when the
  /// occurrence was already published. Thread-safe (the connection is the caller's).
  redis::Result<std::optional<std::string>> publish(redis::Connection& redis,
                                                    const schedule::Occurrence& occurrence,
                                                    std::string_view payload_json);

  /// `relay:<stream>:occ:<app>:<schedule>:<scheduled-at>`.
  std::string dedupeKey(const schedule::Occurrence& occurrence) const;

 private:
  void sleepUntil(WallTime when);
  /// The recheck of a round: false when Redis failed (the round is abandoned).
  bool recheck(redis::Connection& redis, const app::Snapshot& snapshot, PublishRound& round);

  PublisherSettings settings_;
  redis::Endpoint endpoint_;
  const app::Registry& registry_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  OccurrencePublication publication_;
  schedule::OccurrencePlanner planner_;
  StopSignal stopping_;
};

}  // namespace relay::catalog
