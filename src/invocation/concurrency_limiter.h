#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace relay::invocation {

/// Slots for running invocations: MAX_CONCURRENCY worker-wide and min(concurrency,
/// MAX_CONCURRENCY) per app. Thread-safe.
class ConcurrencyLimiter {
 public:
  explicit ConcurrencyLimiter(int max_concurrency) : max_(max_concurrency) {}

  /// A held pair of slots (worker + app); released when destroyed.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : limiter_(other.limiter_), app_(std::move(other.app_)) {
      other.limiter_ = nullptr;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    friend class ConcurrencyLimiter;
    Slot(ConcurrencyLimiter* limiter, std::string app) : limiter_(limiter), app_(std::move(app)) {}
    ConcurrencyLimiter* limiter_;
    std::string app_;
  };

  /// Waits up to `wait` for a worker slot and a slot of `app` (capped at `app_concurrency`);
  /// nullopt when none freed in time or `stopping` turned true (the message then stays pending,
  /// nothing is charged). Blocks the calling thread.
  std::optional<Slot> acquire(const std::string& app, int app_concurrency,
                              std::chrono::milliseconds wait,
                              const std::atomic<bool>* stopping = nullptr);

  /// A worker slot and a slot of `app` if both are free now; nullopt otherwise. Never blocks.
  std::optional<Slot> tryAcquire(const std::string& app, int app_concurrency);

  int inUse() const;

 private:
  void release(const std::string& app);

  const int max_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int used_ = 0;
  std::map<std::string, int> per_app_;
};

}  // namespace relay::invocation
