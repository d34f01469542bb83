#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "invocation/keys.h"
#include "observability/metrics.h"
#include "redis/connection.h"

namespace relay::stream {

/// The counters of one minute, summed over every worker: `events:<outcome>`,
/// `invocations:<outcome>`, `dlq:<reason>` (the labels of the metrics of the same names).
struct MinuteCounts {
  std::int64_t minute = 0;  // Unix minute (seconds / 60)
  std::map<std::string, long long> counts;
};

/// Adds this worker's events, invocation outcomes and DLQ entries to per-minute hashes every
/// worker shares (`relay:<stream>:minute:<unix-minute>`, HINCRBY, a TTL so they expire on their
/// own): the throughput history `relay console` charts (docs/console.md). Reads the deltas off
/// the Metrics since the previous flush, so nothing on the message path changes; a count lands
/// in the minute of the flush that carries it (at most one flush interval late). A failed write
/// keeps its deltas for the next flush and counts a Redis error (op `throughput`). Not
/// thread-safe: one flusher (the housekeeper).
class ThroughputRecorder {
 public:
  ThroughputRecorder(invocation::StreamKeys keys, observability::Metrics& metrics, Clock& clock,
                     std::chrono::milliseconds ttl = std::chrono::hours(25));

  /// One flush on the caller's connection; blocks for one round trip when there is a delta.
  void flush(redis::Connection& redis);

 private:
  std::map<std::string, double> totals() const;

  invocation::StreamKeys keys_;
  observability::Metrics& metrics_;
  Clock& clock_;
  std::chrono::milliseconds ttl_;
  std::map<std::string, double> flushed_;  // what earlier flushes already wrote
};

/// The counters of minutes [first, last] (missing minutes come back with no counts), in order.
redis::Result<std::vector<MinuteCounts>> readThroughput(redis::Connection& redis,
                                                        const invocation::StreamKeys& keys,
                                                        std::int64_t first, std::int64_t last);

}  // namespace relay::stream
