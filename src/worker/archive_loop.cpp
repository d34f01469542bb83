#include "worker/archive_loop.h"

#include <utility>

namespace relay::worker {

ArchiveLoop::ArchiveLoop(std::unique_ptr<history::Archiver> archiver, redis::Endpoint endpoint,
                         observability::Metrics& metrics, observability::Logger& logger,
                         Clock& clock)
    : archiver_(std::move(archiver)),
      metrics_(metrics),
      logger_(logger),
      chore_("relay-archiver", std::move(endpoint), clock) {}

ArchiveLoop::~ArchiveLoop() { stop(); }

void ArchiveLoop::start() {
  RedisChore::Hooks hooks;
  hooks.round = [this](redis::Connection& redis) {
    auto pass = archiver_->passOnce(redis);
    if (!pass.ok()) {
      metrics_.countRedisError("archive");
      if (!failing_) logger_.warn("archiver pass failed", {{"error", pass.error().message}});
      failing_ = true;
      return;
    }
    if (failing_) logger_.info("archiver recovered");
    failing_ = false;
  };
  hooks.unreachable = [](const redis::Error&) {};
  hooks.last = [this](redis::Connection& redis) { archiver_->release(redis); };
  chore_.start(archiver_->settings().interval, std::move(hooks));
}

void ArchiveLoop::stop() { chore_.stop(); }

}  // namespace relay::worker
