#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/stop_signal.h"
#include "redis/connection.h"
#include "redis/endpoint.h"

namespace relay::worker {

/// One background thread with its own Redis connection, for the worker's periodic chores (the
/// housekeeper, the pause watcher): connects (again on the next round after any failure), calls
/// `round` with the connection, then sleeps `interval` on the clock (a stop() ends the sleep at
/// once; an idle chore wakes once per interval).
/// After the stop, `last` runs once when the connection is still usable.
class RedisChore {
 public:
  struct Hooks {
    std::function<void(redis::Connection&)> round;
    /// A connection attempt failed (the round is skipped).
    std::function<void(const redis::Error&)> unreachable;
    std::function<void(redis::Connection&)> last;  // optional
  };

  /// `name` names the thread (docs/operations.md "Threads").
  RedisChore(std::string name, redis::Endpoint endpoint, Clock& clock);
  /// Stops and joins the thread.
  ~RedisChore();
  RedisChore(const RedisChore&) = delete;
  RedisChore& operator=(const RedisChore&) = delete;

  /// Starts the thread; a second call does nothing.
  void start(std::chrono::milliseconds interval, Hooks hooks);
  /// Ends the thread (at once, or when its current round ends) and joins it. Thread-safe,
  /// idempotent.
  void stop();

 private:
  void loop(std::chrono::milliseconds interval, const Hooks& hooks);

  std::string name_;
  redis::Endpoint endpoint_;
  Clock& clock_;
  StopSignal stopping_;
  std::mutex thread_mutex_;
  std::thread thread_;
};

}  // namespace relay::worker
