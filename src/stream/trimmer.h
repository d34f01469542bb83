#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "invocation/keys.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "stream/retention.h"

namespace relay::stream {

/// REDIS_STREAM_RETENTION and REDIS_DLQ_RETENTION (docs/operations.md "Retention"); zero: never
/// trim.
struct RetentionSettings {
  std::chrono::milliseconds stream = std::chrono::hours(24);
  std::chrono::milliseconds dlq = std::chrono::hours(24 * 7);
};

/// What one trimming pass removed.
struct TrimReport {
  long long stream_trimmed = 0;
  long long dlq_trimmed = 0;
  std::optional<StreamId> stream_min_id;  // the MINID used on the source stream, if any
};

/// Applies retention: trims the source stream below the id every group has both delivered and
/// acknowledged (and only entries older than the retention), and the DLQ by age. Stateless
/// apart from its settings; thread-safe, each call on the caller's Connection.
class Trimmer {
 public:
  Trimmer(invocation::StreamKeys keys, RetentionSettings settings, observability::Metrics& metrics,
          observability::Logger& logger, Clock& clock);

  /// One pass over the stream and the DLQ; blocks for a few round trips. Both are attempted;
  /// the first failure is returned (and every failure counted as a Redis error).
  redis::Result<TrimReport> trimOnce(redis::Connection& redis);

  /// Every group's position: XINFO GROUPS first, then XPENDING per group (the order
  /// streamTrimId() relies on). A stream that does not exist has no groups.
  static redis::Result<std::vector<GroupPosition>> groupPositions(redis::Connection& redis,
                                                                  const std::string& stream);

  const RetentionSettings& settings() const { return settings_; }

 private:
  redis::Result<long long> trimStream(redis::Connection& redis, TrimReport& report);
  redis::Result<long long> trimDlq(redis::Connection& redis);

  invocation::StreamKeys keys_;
  RetentionSettings settings_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
};

}  // namespace relay::stream
