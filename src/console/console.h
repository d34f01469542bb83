#pragma once

#include <chrono>
#include <memory>
#include <ostream>

#include "common/clock.h"
#include "common/random.h"
#include "common/result.h"
#include "console/apps_view.h"
#include "console/connection_pool.h"
#include "console/console_config.h"
#include "console/console_guard.h"
#include "console/console_state.h"
#include "console/paused_apps_cache.h"
#include "console/replay_jobs.h"
#include "http/server.h"
#include "observability/logger.h"

namespace relay::console {

/// Fixed internals; tests shorten them.
struct ConsoleInternals {
  std::size_t handler_threads = 4;
  std::chrono::milliseconds request_timeout{30'000};
  std::chrono::milliseconds apps_max_age{2'000};
  GuardSettings guard;  // sessions and the failed-login limit
};

/// `relay console` (docs/console.md): the JSON API and the embedded pages over one HttpServer,
/// reading Redis and the apps root of the worker's configuration. It runs a handler only for
/// an explicit replay; with read_only it registers no mutation endpoint at all.
class Console {
 public:
  /// Builds the runtime, the apps view and the connection pool and binds the address (kUnavailable
  /// when it cannot). Nothing is served until start().
  static Result<std::unique_ptr<Console>> create(const ConsoleConfig& config, std::ostream& log,
                                                 Clock& clock, Random& random,
                                                 ConsoleInternals internals = {});
  ~Console();

  /// Serves on the server's threads; returns at once.
  Status start();
  /// Stops serving; a replay that is running finishes first. Idempotent.
  void stop();

  const http::Address& address() const { return server_->address(); }
  observability::Logger& logger() { return logger_; }

 private:
  Console(const ConsoleConfig& config, std::ostream& log, Clock& clock);
  using Handler = std::function<http::HttpReply(const http::HttpRequest&)>;
  void routes();
  void read(const std::string& path, Handler handler, const std::string& method = "GET");
  void mutate(const std::string& path, Handler handler);

  ConsoleConfig config_;
  Clock& clock_;
  observability::Logger logger_;
  SecureRandom session_random_;  // session ids: others must not predict them
  std::unique_ptr<ConsoleGuard> guard_;
  std::unique_ptr<ConnectionPool> pool_;
  std::unique_ptr<PausedAppsCache> paused_;  // before apps_: its availability check reads it
  std::unique_ptr<AppsView> apps_;
  std::unique_ptr<ReplayJobs> jobs_;
  std::unique_ptr<ConsoleState> state_;
  std::unique_ptr<http::HttpServer> server_;  // last: its handlers use the above
};

}  // namespace relay::console
