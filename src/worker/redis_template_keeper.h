#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "app/registry.h"
#include "invocation/keys.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"

namespace relay::worker {

/// Keeps each app's last valid template in Redis (`relay:<stream>:apps:<app>`, docs/apps.md
/// "Loaded, available, and reloads"), so that a worker started, restarted or scaled up while an
/// app's template is invalid still classifies that app's events with its last valid rules: matched
/// messages then wait (unavailable) instead of being acknowledged as unmatched. Thread-safe; one
/// connection, made on first use and again after a failure.
class RedisTemplateKeeper {
 public:
  RedisTemplateKeeper(redis::Endpoint endpoint, invocation::StreamKeys keys,
                      observability::Metrics& metrics, observability::Logger& logger);

  void keep(const std::string& app, const std::string& text);
  std::optional<std::string> recall(const std::string& app);
  /// The registry's view of this keeper.
  app::TemplateKeeper keeper();

 private:
  redis::Connection* connection();

  redis::Endpoint endpoint_;
  invocation::StreamKeys keys_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  std::mutex mutex_;
  std::unique_ptr<redis::Connection> connection_;
};

}  // namespace relay::worker
