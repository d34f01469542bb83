#include "worker/cancel_watcher.h"

#include "common/thread_name.h"
#include "redis/reconnect.h"
#include "stream/stream_entry.h"

namespace relay::worker {

CancelWatcher::CancelWatcher(CancelSettings settings, redis::Endpoint endpoint,
                             invocation::StreamKeys keys, invocation::RunningAttempts& running,
                             observability::Metrics& metrics, observability::Logger& logger,
                             Clock& clock)
    : settings_(settings),
      endpoint_(std::move(endpoint)),
      keys_(std::move(keys)),
      running_(running),
      metrics_(metrics),
      logger_(logger),
      clock_(clock) {}

CancelWatcher::~CancelWatcher() { stop(); }

redis::Status CancelWatcher::position(redis::Connection& redis) {
  auto last = redis.command({"XREVRANGE", keys_.cancels(), "+", "-", "COUNT", "1"});
  if (!last.ok()) return last.error();
  auto entries = stream::parseEntries(last->view());
  if (!entries.ok()) return entries.error();
  cursor_ = entries->empty() ? "0-0" : entries->front().id;
  return {};
}

redis::Result<int> CancelWatcher::readOnce(redis::Connection& redis) {
  if (cursor_.empty()) {
    if (auto positioned = position(redis); !positioned.ok()) return positioned.error();
  }
  auto reply =
      redis.command({"XREAD", "COUNT", "100", "BLOCK", std::to_string(settings_.block.count()),
                     "STREAMS", keys_.cancels(), cursor_});
  if (!reply.ok()) return reply.error();
  auto entries = stream::parseReadGroup(reply->view());
  if (!entries.ok()) return entries.error();
  int stopped = 0;
  for (const invocation::Message& entry : *entries) {
    cursor_ = entry.id;
    const std::string* id = entry.find("id");
    const std::string* field = entry.find("field");
    const std::string* token = entry.find("token");
    if (!id || !field || !token) continue;                // not written by the cancel script
    if (!running_.cancel(*id, *field, *token)) continue;  // another worker's attempt
    ++stopped;
    const std::string::size_type slash = field->find('/');
    const std::string app = field->substr(0, slash);
    const std::string handler = slash == std::string::npos ? "" : field->substr(slash + 1);
    metrics_.countCancellation(app, handler);
    const std::string* cancel = entry.find("cancel");
    logger_.warn("cancelling a running attempt: stopping its handler",
                 {{"message_id", *id},
                  {"app", app},
                  {"handler", handler},
                  {"cancel", cancel ? *cancel : ""}});
  }
  return stopped;
}

void CancelWatcher::start() {
  std::lock_guard lock(thread_mutex_);
  if (thread_.joinable()) return;
  thread_ = namedThread("relay-cancels", [this] { loop(); });
}

void CancelWatcher::stop() {
  stopping_.request();
  {
    std::lock_guard lock(reading_mutex_);
    if (reading_) reading_->interrupt();
  }
  std::lock_guard lock(thread_mutex_);
  if (thread_.joinable()) thread_.join();
}

void CancelWatcher::loop() {
  std::unique_ptr<redis::Connection> redis;
  redis::Backoff backoff(settings_.backoff, settings_.backoff_cap);
  while (!stopping_.requested()) {
    if (auto connected = redis::reconnect(redis, endpoint_); !connected.ok()) {
      redis.reset();
      metrics_.countRedisError("connect");
      stopping_.sleepFor(clock_, backoff.next());
      continue;
    }
    {
      std::lock_guard lock(reading_mutex_);
      if (stopping_.requested()) break;
      reading_ = redis.get();
    }
    auto read = readOnce(*redis);
    {
      std::lock_guard lock(reading_mutex_);
      reading_ = nullptr;
    }
    if (read.ok()) {
      backoff.reset();
      continue;
    }
    if (stopping_.requested()) break;
    metrics_.countRedisError("cancels");
    logger_.debug("reading the cancels stream failed", {{"error", read.error().message}});
    stopping_.sleepFor(clock_, backoff.next());
  }
}

}  // namespace relay::worker
