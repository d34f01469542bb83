#include "common/system_clock.h"

#include <thread>

namespace relay {

WallTime SystemClock::now() const { return std::chrono::system_clock::now(); }

MonoTime SystemClock::monotonicNow() const { return std::chrono::steady_clock::now(); }

void SystemClock::sleepFor(std::chrono::nanoseconds duration) {
  std::this_thread::sleep_for(duration);
}

void SystemClock::waitUntil(std::condition_variable& changed, std::unique_lock<std::mutex>& lock,
                            MonoTime deadline) {
  changed.wait_until(lock, deadline);
}

}  // namespace relay
