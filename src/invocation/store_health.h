#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace relay::invocation {

/// When a failing lifecycle call makes the worker unhealthy. Fixed internals: tests shorten them.
struct StoreHealthSettings {
  /// Failures in a row of one call (`try_start`, `complete`...) that make the worker unhealthy.
  int threshold = 3;
  /// A run of failures counts while its last failure is this recent: a call nobody makes any
  /// more (the renewal of a claim that ended) does not keep the worker unhealthy for ever. A
  /// message left pending by a failing call is retried by every reclaim sweep (each minute).
  std::chrono::milliseconds window{std::chrono::minutes(2)};
};

/// Whether the lifecycle's store calls (its Lua scripts) are failing, for /healthz
/// (docs/operations.md "HTTP endpoints"): unhealthy while one call has failed `threshold` times
/// in a row, the last within `window` (a script error, NOSCRIPT that EVAL cannot cure, a key of
/// the wrong type, an ACL that forbids a command, Redis gone past the retries); healthy again at
/// the first call of that kind that succeeds. Each call keeps its own run: a failed start is
/// followed by a release that succeeds, which must not hide it, and one message's corrupt state
/// among healthy ones never adds up to three. Thread-safe; every call is a short critical
/// section.
class StoreHealth {
 public:
  explicit StoreHealth(Clock& clock, StoreHealthSettings settings = {})
      : clock_(clock), settings_(settings) {}

  /// `op` names the call as relay_redis_errors_total does (`try_start`, `complete`...).
  void succeeded(std::string_view op);
  void failed(std::string_view op, const Error& error);
  /// Why the lifecycle is unhealthy: `lifecycle store calls are failing: <op> failed N times in
  /// a row since <time>, the last at <time>: <error>` (the longest run); nullopt while not.
  std::optional<std::string> problem() const;

 private:
  struct Run {
    int failures = 0;
    WallTime first{};
    WallTime last{};
    std::string error;
  };

  Clock& clock_;
  const StoreHealthSettings settings_;
  mutable std::mutex mutex_;
  std::map<std::string, Run, std::less<>> runs_;  // by call
};

}  // namespace relay::invocation
