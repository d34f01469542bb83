#include "worker/redis_template_keeper.h"

#include <utility>

#include "redis/reconnect.h"

namespace relay::worker {

RedisTemplateKeeper::RedisTemplateKeeper(redis::Endpoint endpoint, invocation::StreamKeys keys,
                                         observability::Metrics& metrics,
                                         observability::Logger& logger)
    : endpoint_(std::move(endpoint)), keys_(std::move(keys)), metrics_(metrics), logger_(logger) {}

redis::Connection* RedisTemplateKeeper::connection() {
  if (auto connected = redis::reconnect(connection_, endpoint_); !connected.ok()) {
    metrics_.countRedisError("connect");
    // Once per outage at warn: the worker retries every few seconds while something is owed.
    logger_.log(unreachable_ ? observability::LogLevel::kDebug : observability::LogLevel::kWarn,
                "cannot reach redis for the kept app templates",
                {{"redis", endpoint_.describe()}, {"error", connected.error().message}});
    unreachable_ = true;
    return nullptr;
  }
  unreachable_ = false;
  return connection_.get();
}

void RedisTemplateKeeper::keep(const std::string& app, const std::string& text) {
  std::lock_guard lock(mutex_);
  owed_keeps_.erase(app);
  redis::Connection* redis = connection();
  auto kept = redis ? redis->command({"SET", keys_.appTemplate(app), text})
                    : redis::Result<redis::Reply>(redis::Error{redis::ErrorKind::kIo, ""});
  if (!kept.ok()) {
    if (!redis) {
      owed_keeps_[app] = text;  // the connection failure is logged
      return;
    }
    // A refusal (a reply error) would be refused again: only a lost connection is retried.
    if (kept.error().kind != redis::ErrorKind::kReply) owed_keeps_[app] = text;
    metrics_.countRedisError("keep_template");
    logger_.warn("could not keep the app's valid template",
                 {{"app", app}, {"error", kept.error().message}});
  }
}

std::optional<std::string> RedisTemplateKeeper::recall(const std::string& app) {
  std::lock_guard lock(mutex_);
  redis::Connection* redis = connection();
  // The group's own key, else (one release) the per-stream key Relay used before.
  auto kept = redis ? redis->command({"MGET", keys_.appTemplate(app), keys_.legacyAppTemplate(app)})
                    : redis::Result<redis::Reply>(redis::Error{redis::ErrorKind::kIo, ""});
  if (!kept.ok()) {
    // Unknown, not absent: the worker asks again once Redis answers (a refusal would be
    // refused again).
    if (redis) metrics_.countRedisError("keep_template");
    if (!redis || kept.error().kind != redis::ErrorKind::kReply) owed_recalls_.insert(app);
    return std::nullopt;
  }
  owed_recalls_.erase(app);
  for (std::size_t i = 0; i < 2; ++i) {
    auto element = kept->at(i);
    auto text = element.ok() ? element->optionalString()
                             : redis::Result<std::optional<std::string_view>>(element.error());
    if (!text.ok() || !text->has_value()) continue;
    logger_.warn(
        "template invalid: using the last valid template kept in redis",
        {{"app", app}, {"key", i == 0 ? keys_.appTemplate(app) : keys_.legacyAppTemplate(app)}});
    return std::string(**text);
  }
  return std::nullopt;
}

bool RedisTemplateKeeper::owed() const {
  std::lock_guard lock(mutex_);
  return !owed_recalls_.empty() || !owed_keeps_.empty();
}

std::set<std::string> RedisTemplateKeeper::owedRecalls() const {
  std::lock_guard lock(mutex_);
  return owed_recalls_;
}

bool RedisTemplateKeeper::retryKeeps() {
  std::map<std::string, std::string> owed;
  {
    std::lock_guard lock(mutex_);
    owed = owed_keeps_;
  }
  for (const auto& [app, text] : owed) keep(app, text);
  std::lock_guard lock(mutex_);
  return owed_keeps_.empty();
}

app::TemplateKeeper RedisTemplateKeeper::keeper() {
  return {[this](const std::string& app, const std::string& text) { keep(app, text); },
          [this](const std::string& app) { return recall(app); }};
}

}  // namespace relay::worker
