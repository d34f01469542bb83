#include "invocation/concurrency_limiter.h"

#include <algorithm>

namespace relay::invocation {

ConcurrencyLimiter::Slot::~Slot() {
  if (limiter_) limiter_->release(app_);
}

std::optional<ConcurrencyLimiter::Slot> ConcurrencyLimiter::acquire(
    const std::string& app, int app_concurrency, std::chrono::milliseconds wait,
    const std::atomic<bool>* stopping) {
  const int app_cap = std::max(1, std::min(app_concurrency, max_));
  std::unique_lock lock(mutex_);
  // A bounded wait on a condition variable: the only real-time wait in the pipeline, sized by
  // the caller (tests pass milliseconds), never a sleep. It looks at `stopping` every 100 ms.
  const auto free = [&] { return used_ < max_ && per_app_[app] < app_cap; };
  const auto stop = [&] { return stopping && stopping->load(); };
  std::chrono::milliseconds remaining = wait;
  while (!free()) {
    if (stop() || remaining.count() <= 0) return std::nullopt;
    const std::chrono::milliseconds slice = std::min(remaining, std::chrono::milliseconds(100));
    freed_.wait_for(lock, slice, [&] { return free() || stop(); });
    remaining -= slice;
  }
  ++used_;
  ++per_app_[app];
  return Slot(this, app);
}

std::optional<ConcurrencyLimiter::Slot> ConcurrencyLimiter::tryAcquire(const std::string& app,
                                                                       int app_concurrency) {
  const int app_cap = std::max(1, std::min(app_concurrency, max_));
  std::lock_guard lock(mutex_);
  if (used_ >= max_ || per_app_[app] >= app_cap) return std::nullopt;
  ++used_;
  ++per_app_[app];
  return Slot(this, app);
}

void ConcurrencyLimiter::release(const std::string& app) {
  {
    std::lock_guard lock(mutex_);
    --used_;
    --per_app_[app];
  }
  freed_.notify_all();
}

int ConcurrencyLimiter::inUse() const {
  std::lock_guard lock(mutex_);
  return used_;
}

}  // namespace relay::invocation
