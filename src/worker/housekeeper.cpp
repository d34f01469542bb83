#include "worker/housekeeper.h"

#include <algorithm>
#include <memory>

#include "redis/errors.h"

namespace relay::worker {

Housekeeper::Housekeeper(HousekeepingSettings settings, redis::Endpoint endpoint,
                         invocation::StreamKeys keys, stream::Trimmer& trimmer,
                         stream::ThroughputRecorder& throughput, observability::Metrics& metrics,
                         observability::Logger& logger, Clock& clock)
    : settings_(settings),
      keys_(std::move(keys)),
      trimmer_(trimmer),
      throughput_(throughput),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      chore_("relay-housekeep", std::move(endpoint), clock) {}

Housekeeper::~Housekeeper() { stop(); }

void Housekeeper::start() {
  chore_.start(settings_.refresh_interval,
               {.round = [this](redis::Connection& redis) { round(redis); },
                .unreachable =
                    [this](const redis::Error& error) {
                      metrics_.countRedisError("connect");
                      setGroupState({true, false, "redis unreachable: " + error.message});
                    },
                .last = [this](redis::Connection& redis) { last(redis); }});
}

void Housekeeper::stop() { chore_.stop(); }

GroupState Housekeeper::groupState() const {
  std::lock_guard lock(mutex_);
  return group_;
}

void Housekeeper::setGroupState(GroupState state) {
  std::lock_guard lock(mutex_);
  group_ = std::move(state);
}

void Housekeeper::refreshOnce(redis::Connection& redis) {
  auto pending = redis.command({"XPENDING", keys_.stream, keys_.group});
  if (!pending.ok()) {
    if (redis::isReplyError(pending.error(), "NOGROUP")) {
      setGroupState({true, false,
                     "consumer group \"" + keys_.group + "\" of stream \"" + keys_.stream +
                         "\" does not exist"});
      return;
    }
    metrics_.countRedisError("xpending");
    setGroupState({true, false, "cannot check the consumer group: " + pending.error().message});
    return;
  }
  auto count = pending->at(0);
  if (count.ok() && count->integer().ok()) metrics_.setPending(*count->integer());
  setGroupState({true, true, {}});
}

void Housekeeper::round(redis::Connection& redis) {
  refreshOnce(redis);
  throughput_.flush(redis);
  if (!settings_.consumer.empty()) {
    auto beat = redis.command({"SET", keys_.heartbeat(settings_.consumer), settings_.heartbeat,
                               "PX", std::to_string(settings_.heartbeat_ttl.count())});
    if (!beat.ok()) metrics_.countRedisError("heartbeat");
  }
  if (clock_.monotonicNow() >= next_trim_) {
    auto trimmed = trimmer_.trimOnce(redis);
    if (!trimmed.ok()) {
      logger_.warn("retention pass failed", {{"error", trimmed.error().message}});
    }
    next_trim_ = clock_.monotonicNow() + settings_.retention_interval;
  }
}

// What the last seconds before the stop counted (running invocations have finished by now).
void Housekeeper::last(redis::Connection& redis) {
  throughput_.flush(redis);
  if (!settings_.consumer.empty()) {
    (void)redis.command({"DEL", keys_.heartbeat(settings_.consumer)});
  }
}

}  // namespace relay::worker
