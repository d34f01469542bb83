#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "invocation/keys.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "worker/redis_chore.h"

namespace relay::worker {

/// How often the paused set is read. A fixed internal: tests shorten it.
struct PauseSettings {
  std::chrono::milliseconds poll{2'000};
};

/// Follows the cluster-wide set of paused apps (invocation/paused_apps.h; docs/cli.md "Pausing
/// an app"): reads it every poll interval on its own thread and connection, and on a change
/// updates relay_app_paused{app}, logs it and calls the change callback (the worker refreshes
/// app availability there, and redrives its pending messages after a resume). A failed read
/// keeps the last known set: an outage never resumes an app.
class PauseWatcher {
 public:
  struct Change {
    std::vector<std::string> paused;   // newly paused
    std::vector<std::string> resumed;  // no longer paused
  };
  using OnChange = std::function<void(const Change&)>;

  PauseWatcher(PauseSettings settings, redis::Endpoint endpoint, invocation::StreamKeys keys,
               observability::Metrics& metrics, observability::Logger& logger, Clock& clock);
  /// Stops and joins the thread.
  ~PauseWatcher();
  PauseWatcher(const PauseWatcher&) = delete;
  PauseWatcher& operator=(const PauseWatcher&) = delete;

  /// Set before start(); called on the polling thread (or pollOnce()'s caller).
  void onChange(OnChange callback) { on_change_ = std::move(callback); }
  /// Whether `app` was paused at the last successful read. Thread-safe, never blocks on Redis.
  bool paused(std::string_view app) const;

  /// One read on the caller's connection; applies and reports a change.
  redis::Result<Change> pollOnce(redis::Connection& redis);
  /// Starts the polling thread. Call at most once.
  void start();
  /// Ends the thread (within one stop check) and joins it. Thread-safe, idempotent.
  void stop();

 private:
  PauseSettings settings_;
  invocation::StreamKeys keys_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  OnChange on_change_;
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> paused_;
  RedisChore chore_;  // last: its thread ends before the members it uses
};

}  // namespace relay::worker
