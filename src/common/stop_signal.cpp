#include "common/stop_signal.h"

namespace relay {

void StopSignal::request() {
  flag_ = true;
  nudge();
}

void StopSignal::nudge() {
  // Taking the mutex orders this after a waiter's check of its condition: it is either still
  // before that check (and sees the flag) or already waiting (and is notified).
  { const std::lock_guard lock(mutex_); }
  changed_.notify_all();
}

bool StopSignal::sleepUntil(Clock& clock, MonoTime deadline, const std::atomic<bool>* wake) {
  const auto woken = [&] { return flag_.load() || (wake != nullptr && wake->load()); };
  std::unique_lock lock(mutex_);
  while (!woken() && clock.monotonicNow() < deadline) clock.waitUntil(changed_, lock, deadline);
  return woken();
}

bool StopSignal::sleepFor(Clock& clock, std::chrono::nanoseconds duration,
                          const std::atomic<bool>* wake) {
  return sleepUntil(clock, clock.monotonicNow() + duration, wake);
}

}  // namespace relay
