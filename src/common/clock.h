#pragma once

#include <chrono>

namespace relay {

using WallTime = std::chrono::system_clock::time_point;
using MonoTime = std::chrono::steady_clock::time_point;

/// The only source of time and of waiting: everything time-dependent takes a Clock&, so tests
/// substitute a FakeClock and never wait for real minutes.
class Clock {
 public:
  virtual ~Clock() = default;
  /// Wall-clock time (UTC); used for RFC 3339 stamps, now() cut-offs and cron.
  virtual WallTime now() const = 0;
  /// Monotonic time; used for deadlines and durations.
  virtual MonoTime monotonicNow() const = 0;
  /// Blocks the calling thread for `duration` (a FakeClock advances instead of blocking).
  virtual void sleepFor(std::chrono::nanoseconds duration) = 0;
};

}  // namespace relay
