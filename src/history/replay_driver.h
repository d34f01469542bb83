#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "app/registry.h"
#include "common/clock.h"
#include "common/stop_signal.h"
#include "history/replay_pace.h"
#include "history/replay_record.h"
#include "invocation/keys.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "redis/script.h"

namespace relay::history {

/// Fixed internals of replay driving; tests shorten them through this struct.
struct ReplayDriverSettings {
  invocation::StreamKeys keys;
  std::string consumer;  // this worker: who holds a replay's lease
  std::chrono::milliseconds poll{1'000};
  /// A driver renews its lease with every page; a replay whose driver died is taken up by
  /// another worker once the lease ran out (docs/replay.md "Driving").
  std::chrono::milliseconds lease{10'000};
  std::size_t page = 500;
  /// How long a finished replay's record (and its copies' index) is kept: the `--again` check
  /// and `relay replay ls` see it that long.
  std::chrono::milliseconds record_ttl = kReplayRecordTtl;
  std::size_t max_event_bytes = 256 * 1024;
  /// REDIS_STREAM_RETENTION: names the retention of a missing part when no worker recorded it
  /// in Redis (docs/replay.md "Missing entries"); 0: none.
  std::chrono::milliseconds stream_retention{0};
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5'000};
};

/// What one drive did.
struct DriveReport {
  std::string id;
  std::string ended;  // done, failed, cancelled (stopped elsewhere), lost (lease), stopping
  long long published = 0;
};

/// Drives replays (docs/replay.md "Driving"): every worker looks for a running replay whose
/// lease is free, takes it and publishes its copies into the stream in the order of the source
/// (the stream, the archive for what the stream no longer holds, or the dead-letter queue),
/// classifying each entry against the chosen rules at its publication time and publishing only
/// what they match. Each page is one script: the copies (once per replay and original, a
/// dedupe hash beside the XADD), the cursor, the counters and the lease. A driver that dies
/// leaves a cursor another worker resumes from; nothing is published twice. One per worker, on
/// its own thread.
class ReplayDriver {
 public:
  ReplayDriver(ReplayDriverSettings settings, redis::Endpoint endpoint,
               const app::Registry& registry, observability::Metrics& metrics,
               observability::Logger& logger, Clock& clock);

  /// Looks for replays every `poll` and drives them until stop(). Blocks.
  void run();
  /// Asks run() (and a drive in progress) to return; the lease is given up. Thread-safe.
  void stop();
  /// One look: takes the first running replay whose lease is free and drives it to its end
  /// (or a lost lease, or a stop) on the caller's connection; nullopt when none was free.
  redis::Result<std::optional<DriveReport>> driveOnce(redis::Connection& redis);

 private:
  struct Page;
  redis::Result<DriveReport> drive(redis::Connection& redis, const ReplayStatus& replay);
  redis::Result<DriveReport> driveStream(redis::Connection& redis, const ReplayStatus& replay);
  redis::Result<DriveReport> driveDeadLetters(redis::Connection& redis, const ReplayStatus& replay);
  /// Publishes one page's copies with the cursor; false when the drive ends (report.ended says
  /// why: cancelled, or the lease lost).
  redis::Result<bool> publish(redis::Connection& redis, const ReplayStatus& replay,
                              const Page& page, DriveReport& report);
  /// The archive that keeps `app`'s entries older than the stream ("" none): the driver's one
  /// dependency on the archive (docs/replay.md "Archive"); its entries keep their stream ids,
  /// so a window is read from it with XRANGE like the stream.
  redis::Result<std::string> archiveOf(redis::Connection& redis, const std::string& app);
  redis::Result<bool> finish(redis::Connection& redis, const std::string& id,
                             const std::string& state, const std::string& error);
  /// Waits until `pace` lets a page of `copies` be published; false when the worker stops
  /// meanwhile.
  bool waitForRate(const ReplayPace& pace, std::size_t copies);

  ReplayDriverSettings settings_;
  redis::Endpoint endpoint_;
  const app::Registry& registry_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  redis::Script take_;
  redis::Script publish_;
  redis::Script finish_;
  StopSignal stopping_;
};

}  // namespace relay::history
