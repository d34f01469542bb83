#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace relay {

using WallTime = std::chrono::system_clock::time_point;
using MonoTime = std::chrono::steady_clock::time_point;

/// `time` as Unix milliseconds (whole milliseconds since 1970-01-01T00:00:00Z, truncated): the
/// form stream ids, journal records and the console's JSON carry instants in.
inline std::int64_t unixMillis(WallTime time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
}

/// The only source of time and of waiting: everything time-dependent takes a Clock&, so tests
/// substitute a FakeClock and never wait for real minutes.
class Clock {
 public:
  /// The longest one waitUntil() of a clock that does not run in real time sleeps before its
  /// caller looks at its condition again.
  static constexpr std::chrono::milliseconds kWaitStep{100};

  virtual ~Clock() = default;
  /// Wall-clock time (UTC); used for RFC 3339 stamps, now() cut-offs and cron.
  virtual WallTime now() const = 0;
  /// Monotonic time; used for deadlines and durations.
  virtual MonoTime monotonicNow() const = 0;
  /// Blocks the calling thread for `duration` (a FakeClock advances instead of blocking).
  virtual void sleepFor(std::chrono::nanoseconds duration) = 0;
  /// Waits on `changed` with `lock` held (as std::condition_variable::wait_until) until
  /// `deadline` or a notification; may return early, so callers loop on their condition. The
  /// real clock blocks on the condition variable, so an idle wait costs one wake-up; this
  /// default (a FakeClock's) releases the lock and sleepFor()s at most kWaitStep.
  virtual void waitUntil(std::condition_variable& changed, std::unique_lock<std::mutex>& lock,
                         MonoTime deadline);
};

}  // namespace relay
