#pragma once

#include <chrono>
#include <mutex>

#include "common/clock.h"

namespace relay::testing {

/// A Clock that only moves when told to: sleepFor() advances it instead of blocking, so code
/// that waits minutes runs instantly. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(WallTime start = WallTime(std::chrono::seconds(1'790'000'000)))
      : wall_(start) {}

  WallTime now() const override {
    std::lock_guard lock(mutex_);
    return wall_;
  }
  MonoTime monotonicNow() const override {
    std::lock_guard lock(mutex_);
    return mono_;
  }
  void sleepFor(std::chrono::nanoseconds duration) override {
    advance(duration);
    std::lock_guard lock(mutex_);
    slept_ += duration;
  }

  void advance(std::chrono::nanoseconds duration) {
    std::lock_guard lock(mutex_);
    wall_ += std::chrono::duration_cast<WallTime::duration>(duration);
    mono_ += duration;
  }
  void setWall(WallTime time) {
    std::lock_guard lock(mutex_);
    wall_ = time;
  }
  /// Total time callers asked to sleep.
  std::chrono::nanoseconds slept() const {
    std::lock_guard lock(mutex_);
    return slept_;
  }

 private:
  mutable std::mutex mutex_;
  WallTime wall_;
  MonoTime mono_{};
  std::chrono::nanoseconds slept_{0};
};

}  // namespace relay::testing
