#include "worker/redis_chore.h"

#include "common/thread_name.h"
#include "redis/reconnect.h"

namespace relay::worker {

RedisChore::RedisChore(std::string name, redis::Endpoint endpoint, Clock& clock)
    : name_(std::move(name)), endpoint_(std::move(endpoint)), clock_(clock) {}

RedisChore::~RedisChore() { stop(); }

void RedisChore::start(std::chrono::milliseconds interval, Hooks hooks) {
  std::lock_guard lock(thread_mutex_);
  if (thread_.joinable()) return;
  thread_ =
      namedThread(name_, [this, interval, hooks = std::move(hooks)] { loop(interval, hooks); });
}

void RedisChore::stop() {
  stopping_.request();
  std::lock_guard lock(thread_mutex_);
  if (thread_.joinable()) thread_.join();
}

void RedisChore::loop(std::chrono::milliseconds interval, const Hooks& hooks) {
  std::unique_ptr<redis::Connection> redis;
  while (!stopping_.requested()) {
    if (auto connected = redis::reconnect(redis, endpoint_); !connected.ok()) {
      redis.reset();
      hooks.unreachable(connected.error());
    }
    if (redis) hooks.round(*redis);
    stopping_.sleepFor(clock_, interval);
  }
  if (hooks.last && redis && redis->ok()) hooks.last(*redis);
}

}  // namespace relay::worker
