#pragma once

#include <atomic>
#include <chrono>

#include "common/clock.h"

namespace relay {

/// How often an interruptible sleep looks at its stop flags: the longest a stop waits.
inline constexpr std::chrono::milliseconds kStopCheck{100};

/// Sleeps on `clock` until `deadline`, waking every kStopCheck to return early once `stop` (or
/// `wake`, when given) is set: the one loop every background thread of the worker waits with.
/// Returns whether it returned early. Blocks the calling thread.
inline bool sleepUntilOr(Clock& clock, MonoTime deadline, const std::atomic<bool>& stop,
                         const std::atomic<bool>* wake = nullptr) {
  while (clock.monotonicNow() < deadline) {
    if (stop.load() || (wake != nullptr && wake->load())) return true;
    clock.sleepFor(std::min<std::chrono::nanoseconds>(kStopCheck, deadline - clock.monotonicNow()));
  }
  return stop.load() || (wake != nullptr && wake->load());
}

/// sleepUntilOr() for a duration from now.
inline bool sleepOr(Clock& clock, std::chrono::milliseconds duration,
                    const std::atomic<bool>& stop) {
  return sleepUntilOr(clock, clock.monotonicNow() + duration, stop);
}

}  // namespace relay
