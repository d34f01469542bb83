#pragma once

#include "common/clock.h"

namespace relay {

/// The real clock; the single place in src/ that reads std::chrono clocks or sleeps.
class SystemClock final : public Clock {
 public:
  WallTime now() const override;
  MonoTime monotonicNow() const override;
  void sleepFor(std::chrono::nanoseconds duration) override;
  void waitUntil(std::condition_variable& changed, std::unique_lock<std::mutex>& lock,
                 MonoTime deadline) override;
};

}  // namespace relay
