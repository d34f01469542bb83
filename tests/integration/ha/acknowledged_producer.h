#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redis/endpoint.h"

namespace relay::testing {

/// One event the producer got acknowledged.
struct Acknowledged {
  int n = 0;
  std::string id;          // the stream id of the acknowledged XADD
  std::string server;      // the master that acknowledged it
  long long replicas = 0;  // WAIT's answer: how many replicas had it then
  bool resent = false;     // an earlier XADD of this event may have been applied (unknown)
  std::chrono::steady_clock::time_point at;
};

/// A producer that loses nothing through a failover, as docs/operations.md ("Failover and
/// your producers") advises: it appends {"kind":"ha","n":N} for N = 1..count to the stream,
/// each XADD followed by `WAIT 1 <wait_timeout>` so an acknowledged event is on a replica too,
/// and moves to N+1 only once N is acknowledged. A call that fails (I/O error, timeout, a
/// READONLY or MOVED it could not follow...) gets a new connection after a short pause and
/// the SAME event is sent again: the failed XADD may have been applied, so an event may be in
/// the stream twice (at least once), never zero times. Runs on its own thread from
/// construction; the destructor stops it.
class AcknowledgedProducer {
 public:
  struct Settings {
    redis::Endpoint endpoint;  // a sentinel endpoint, or a cluster node with slot_key set
    std::string stream = "{events}";
    int count = 100;
    std::chrono::milliseconds interval{10};
    std::chrono::milliseconds wait_timeout{50};
    std::chrono::milliseconds retry_pause{50};
  };

  explicit AcknowledgedProducer(Settings settings);
  ~AcknowledgedProducer();
  AcknowledgedProducer(const AcknowledgedProducer&) = delete;
  AcknowledgedProducer& operator=(const AcknowledgedProducer&) = delete;

  /// Blocks until `n` events are acknowledged or `timeout` passes; false on timeout.
  bool waitForAcknowledged(int n, std::chrono::milliseconds timeout);
  std::vector<Acknowledged> acknowledged() const;
  /// Calls that failed, with their errors, for the test's output.
  std::vector<std::string> failures() const;
  /// The longest time from a failed call to the next acknowledged event.
  std::chrono::milliseconds longestOutage() const;

 private:
  void run();
  void failed(const std::string& what);

  Settings settings_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Acknowledged> acknowledged_;
  std::vector<std::string> failures_;
  std::chrono::steady_clock::time_point outage_start_{};
  std::chrono::milliseconds longest_outage_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;  // last: starts once everything above is built
};

}  // namespace relay::testing
