#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "app/registry.h"
#include "invocation/keys.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"

namespace relay::worker {

/// Keeps each app's last valid template in Redis (`relay:<stream>:apps:<group>:<app>`, docs/apps.md
/// "Loaded, available, and reloads"; read from `relay:<stream>:apps:<app>` when missing, for one
/// release), so that a worker started, restarted or scaled up while an
/// app's template is invalid still classifies that app's events with its last valid rules: matched
/// messages then wait (unavailable) instead of being acknowledged as unmatched. What it could not
/// do for want of Redis (a recall at start while Redis was down, a template it could not keep) it
/// owes: owed() says so and the worker retries (retryKeeps(), then a reload of owedRecalls(),
/// whose recall() tries again) until Redis answers. Thread-safe; one connection, made on first use
/// and again after a failure.
class RedisTemplateKeeper {
 public:
  RedisTemplateKeeper(redis::Endpoint endpoint, invocation::StreamKeys keys,
                      observability::Metrics& metrics, observability::Logger& logger);

  void keep(const std::string& app, const std::string& text);
  std::optional<std::string> recall(const std::string& app);
  /// The registry's view of this keeper.
  app::TemplateKeeper keeper();

  /// Whether a recall or a keep failed for want of Redis and was not done since.
  bool owed() const;
  /// The apps whose last recall failed for want of Redis (their rules may be unknown here):
  /// reloading them recalls again.
  std::set<std::string> owedRecalls() const;
  /// Keeps again the templates that could not be kept; returns whether none is owed any more.
  bool retryKeeps();

 private:
  redis::Connection* connection();  // requires mutex_

  redis::Endpoint endpoint_;
  invocation::StreamKeys keys_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  mutable std::mutex mutex_;
  std::unique_ptr<redis::Connection> connection_;
  bool unreachable_ = false;                       // guarded by mutex_
  std::set<std::string> owed_recalls_;             // guarded by mutex_
  std::map<std::string, std::string> owed_keeps_;  // app -> text; guarded by mutex_
};

}  // namespace relay::worker
