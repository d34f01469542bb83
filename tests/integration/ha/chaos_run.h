#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fakes/temp_dir.h"
#include "integration/ha/acknowledged_producer.h"
#include "integration/ha/ha_apps.h"
#include "integration/ha/ha_worker.h"
#include "redis/endpoint.h"

namespace relay::testing {

/// A chaos run: two workers on the stream {events} of one Redis deployment, an
/// AcknowledgedProducer publishing `events` events, and what a disruption in the middle (a
/// kill -9, a failover) costs: when each worker reached the new master, what was lost, left
/// pending or run more than once (docs/operations.md "Failover and your producers").
class ChaosRun {
 public:
  /// `worker_uris`: the REDIS_URI of each worker; `redis`: where the producer and the final
  /// checks connect (a sentinel endpoint, or a cluster node with slot_key {events}).
  /// `with_schedule`: the apps also fire a schedule every minute (HaApps).
  ChaosRun(const std::vector<std::string>& worker_uris, redis::Endpoint redis, int events,
           bool with_schedule = false);

  /// Starts the workers and then the producer; false (with the logs in `why`) when a worker
  /// did not start.
  bool start(std::string& why);
  /// Blocks until the producer has `n` events acknowledged.
  bool waitForAcknowledged(int n);
  /// Marks now as the moment of the disruption: call it right before the kill or failover.
  void disrupting() { disrupted_at_ = std::chrono::steady_clock::now(); }
  /// From `since` (the disruption), how long each worker took until its
  /// relay_redis_failovers_total reached 1: its first command served by the new master. -1 ms
  /// for a worker that did not within `timeout`.
  std::vector<std::chrono::milliseconds> timeToNewMaster(
      std::chrono::steady_clock::time_point since, std::chrono::milliseconds timeout);
  /// Blocks until every event is acknowledged, every one ran (but those atRisk()), and the group
  /// has nothing pending on the current master; false after `timeout`.
  bool settle(std::chrono::milliseconds timeout);
  /// Events only the old master had confirmed (WAIT saw no replica) before the disruption: the
  /// window replication leaves open, in which a kill -9 may lose them.
  std::vector<int> atRisk() const;
  /// Events that never ran although a replica had them or the new master acknowledged them.
  std::vector<int> lost() const;

  /// XPENDING's count on the current master; -1 when it cannot be read.
  long long pending();
  /// What the delivery guarantees forbid, read from the current master after the run
  /// (docs/pipeline.md "Guarantees"): attempts charged in a state hash that no handler started
  /// (per invocation, the marker's attempt count beyond the attempts that started), and
  /// messages acknowledged while an invocation of their plan is not terminal (or without any
  /// state: acknowledged without running). -1 each when Redis cannot be read.
  struct Audit {
    long long never_run_charged = -1;
    long long early_acks = -1;
    long long messages = 0;  // stream entries audited
  };
  Audit audit();
  HaApps::Coverage coverage() const { return apps_.coverage(events_); }
  const AcknowledgedProducer& producer() const { return *producer_; }
  /// One paragraph for the test output: events, lost, pending, duplicates, the producer's
  /// outage and each worker's time to the new master.
  std::string report(const std::string& what,
                     const std::vector<std::chrono::milliseconds>& followed);
  std::string report(const std::string& what,
                     const std::vector<std::chrono::milliseconds>& followed, const Audit& audit);
  /// Every worker's log, for a failing assertion.
  std::string logs() const;

 private:
  std::vector<std::string> worker_uris_;
  redis::Endpoint redis_;
  int events_;
  HaApps apps_;
  TempDir logs_;
  std::vector<std::unique_ptr<HaWorker>> workers_;
  std::unique_ptr<AcknowledgedProducer> producer_;
  std::chrono::steady_clock::time_point disrupted_at_ =
      std::chrono::steady_clock::time_point::max();
};

}  // namespace relay::testing
