#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/clock.h"

namespace relay {

/// The stop request of a background loop, and the one way its timed waits end early: request()
/// (for good) and nudge() (a loop asked to work now) wake every wait on it at once through a
/// condition variable, so an idle loop wakes only when its interval ends, never to poll a
/// flag. Thread-safe.
class StopSignal {
 public:
  /// Sets the request once and for all and ends every wait on it.
  void request();
  bool requested() const { return flag_.load(); }
  /// The flag itself, for code that only checks it between steps.
  const std::atomic<bool>& flag() const { return flag_; }

  /// Ends every current wait so that it looks at its `wake` flag (set it before calling).
  void nudge();

  /// Waits on `clock` until `deadline`, or until a request or `wake` (when given) is set; returns
  /// whether one of them is. Blocks the calling thread.
  bool sleepUntil(Clock& clock, MonoTime deadline, const std::atomic<bool>* wake = nullptr);
  /// sleepUntil() for a duration from now.
  bool sleepFor(Clock& clock, std::chrono::nanoseconds duration,
                const std::atomic<bool>* wake = nullptr);

 private:
  std::atomic<bool> flag_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace relay
