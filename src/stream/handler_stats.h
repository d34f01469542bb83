#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::stream {

/// The persisted counters of one app/handler (hash `relay:<stream>:stats`).
struct HandlerStats {
  std::string app;
  std::string handler;
  long long succeeded = 0;      // runs that exited 0
  long long failed = 0;         // runs that failed (exit, signal, timeout), retried or not
  long long dead_lettered = 0;  // DLQ entries written (`-`/`-`: malformed or oversized messages)
  double duration_seconds = 0;  // wall time of every run, summed
  // Flow control (docs/apps.md "Flow control"): none of these is a failure.
  long long deferred = 0;      // waits for a throttle, a busy key or a debounce (once per wait)
  long long deduplicated = 0;  // never run: an earlier event of its dedupe key ran
  long long superseded = 0;    // never run: a newer event of its debounce or singleton key did
  long long retry_after = 0;   // runs that exited 75 and were rescheduled uncharged
  /// Runs stopped by `relay cancel` (docs/pipeline.md "Cancellation"); not failures. What was
  /// cancelled before it started never ran and is not counted here.
  long long cancelled = 0;

  /// Every run of the handler: the ones that asked to be retried later or were stopped ran too.
  long long runs() const { return succeeded + failed + retry_after + cancelled; }
};

/// Counter names, the part of a hash field after the last `:`. The lifecycle scripts increment
/// them (src/invocation/lifecycle_scripts.cpp) with HINCRBY/HINCRBYFLOAT, so concurrent workers
/// never lose an update.
inline constexpr std::string_view kStatsSucceeded = "succeeded";
inline constexpr std::string_view kStatsFailed = "failed";
inline constexpr std::string_view kStatsDeadLettered = "dlq";
inline constexpr std::string_view kStatsDuration = "duration_seconds";
inline constexpr std::string_view kStatsDeferred = "deferred";
inline constexpr std::string_view kStatsDeduplicated = "deduplicated";
inline constexpr std::string_view kStatsSuperseded = "superseded";
inline constexpr std::string_view kStatsRetryAfter = "retry_after";
inline constexpr std::string_view kStatsCancelled = "cancelled";

/// The hash field of one counter: `<app>/<handler>:<counter>`.
std::string statsField(std::string_view app, std::string_view handler, std::string_view counter);

/// Turns HGETALL's field/value pairs back into one row per app/handler, sorted by app, then
/// handler. Fields of another shape and unparsable values are skipped (a newer Relay may add
/// counters).
std::vector<HandlerStats> parseStats(const std::vector<std::pair<std::string, std::string>>& hash);

}  // namespace relay::stream
