#include "worker/pause_watcher.h"

#include <algorithm>
#include <iterator>
#include <memory>

#include "invocation/paused_apps.h"

namespace relay::worker {

PauseWatcher::PauseWatcher(PauseSettings settings, redis::Endpoint endpoint,
                           invocation::StreamKeys keys, observability::Metrics& metrics,
                           observability::Logger& logger, Clock& clock)
    : settings_(settings),
      keys_(std::move(keys)),
      metrics_(metrics),
      logger_(logger),
      chore_("relay-pauses", std::move(endpoint), clock) {}

PauseWatcher::~PauseWatcher() { stop(); }

bool PauseWatcher::paused(std::string_view app) const {
  std::lock_guard lock(mutex_);
  return paused_.find(app) != paused_.end();
}

redis::Result<PauseWatcher::Change> PauseWatcher::pollOnce(redis::Connection& redis) {
  auto read = invocation::readPausedApps(redis, keys_);
  if (!read.ok()) {
    metrics_.countRedisError("paused");
    return read.error();
  }
  Change change;
  {
    std::lock_guard lock(mutex_);
    std::set_difference(read->begin(), read->end(), paused_.begin(), paused_.end(),
                        std::back_inserter(change.paused));
    std::set_difference(paused_.begin(), paused_.end(), read->begin(), read->end(),
                        std::back_inserter(change.resumed));
    paused_ = std::set<std::string, std::less<>>(read->begin(), read->end());
  }
  if (change.paused.empty() && change.resumed.empty()) return change;
  for (const std::string& app : change.paused) {
    metrics_.setAppPaused(app, true);
    logger_.info("app paused: its matched invocations stay pending", {{"app", app}});
  }
  for (const std::string& app : change.resumed) {
    metrics_.setAppPaused(app, false);
    logger_.info("app resumed", {{"app", app}});
  }
  if (on_change_) on_change_(change);
  return change;
}

void PauseWatcher::start() {
  chore_.start(
      settings_.poll,
      {.round =
           [this](redis::Connection& redis) {
             auto polled = pollOnce(redis);
             if (!polled.ok()) {
               logger_.debug("reading the paused apps failed", {{"error", polled.error().message}});
             }
           },
       .unreachable = [this](const redis::Error&) { metrics_.countRedisError("connect"); },
       .last = {}});
}

void PauseWatcher::stop() { chore_.stop(); }

}  // namespace relay::worker
