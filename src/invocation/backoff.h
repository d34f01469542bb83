#pragma once

#include <chrono>
#include <vector>

namespace relay::invocation {

/// Fixed retry schedule: the delay after failed attempt N is delays[N-1], the last entry
/// repeating (docs/pipeline.md: 1m, 2m, 5m, then 10m capped). A fixed internal: tests pass their
/// own table to the constructors that take one; the binary has no flag or variable for it.
struct BackoffTable {
  std::vector<std::chrono::milliseconds> delays = {std::chrono::minutes(1), std::chrono::minutes(2),
                                                   std::chrono::minutes(5),
                                                   std::chrono::minutes(10)};

  /// Delay before the attempt that follows failed attempt `failed_attempt` (1-based).
  std::chrono::milliseconds after(int failed_attempt) const;
};

/// The default table's delay after `failed_attempt`.
std::chrono::milliseconds retryDelay(int failed_attempt);

}  // namespace relay::invocation
