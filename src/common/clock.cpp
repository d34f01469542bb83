#include "common/clock.h"

#include <algorithm>

namespace relay {

void Clock::waitUntil(std::condition_variable& /*changed*/, std::unique_lock<std::mutex>& lock,
                      MonoTime deadline) {
  const MonoTime now = monotonicNow();
  if (now >= deadline) return;
  lock.unlock();
  sleepFor(std::min<std::chrono::nanoseconds>(kWaitStep, deadline - now));
  lock.lock();
}

}  // namespace relay
