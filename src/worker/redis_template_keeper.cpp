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
    logger_.warn("cannot reach redis for the kept app templates",
                 {{"redis", endpoint_.describe()}, {"error", connected.error().message}});
    return nullptr;
  }
  return connection_.get();
}

void RedisTemplateKeeper::keep(const std::string& app, const std::string& text) {
  std::lock_guard lock(mutex_);
  redis::Connection* redis = connection();
  if (!redis) return;
  auto kept = redis->command({"SET", keys_.appTemplate(app), text});
  if (!kept.ok()) {
    metrics_.countRedisError("keep_template");
    logger_.warn("could not keep the app's valid template",
                 {{"app", app}, {"error", kept.error().message}});
  }
}

std::optional<std::string> RedisTemplateKeeper::recall(const std::string& app) {
  std::lock_guard lock(mutex_);
  redis::Connection* redis = connection();
  if (!redis) return std::nullopt;
  auto kept = redis->command({"GET", keys_.appTemplate(app)});
  if (!kept.ok()) {
    metrics_.countRedisError("keep_template");
    return std::nullopt;
  }
  auto text = kept->optionalString();
  if (!text.ok() || !text->has_value()) return std::nullopt;
  logger_.warn("template invalid at start: using the last valid template kept in redis",
               {{"app", app}, {"key", keys_.appTemplate(app)}});
  return std::string(**text);
}

app::TemplateKeeper RedisTemplateKeeper::keeper() {
  return {[this](const std::string& app, const std::string& text) { keep(app, text); },
          [this](const std::string& app) { return recall(app); }};
}

}  // namespace relay::worker
