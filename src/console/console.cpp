#include "console/console.h"

#include "catalog/invocation_spec.h"
#include "config/runtime_factory.h"
#include "console/apps_api.h"
#include "console/assets.h"
#include "console/cancel_api.h"
#include "console/dlq_api.h"
#include "console/overview_api.h"
#include "console/pending_api.h"
#include "console/replays_api.h"
#include "console/session_api.h"
#include "invocation/paused_apps.h"

namespace relay::console {

using http::HttpReply;
using http::HttpRequest;

Console::Console(const ConsoleConfig& config, std::ostream& log, Clock& clock)
    : config_(config),
      clock_(clock),
      logger_(log, clock, config.worker.log_level, config.worker.log_format) {}

Console::~Console() { stop(); }

Result<std::unique_ptr<Console>> Console::create(const ConsoleConfig& config, std::ostream& log,
                                                 Clock& clock, Random& random,
                                                 ConsoleInternals internals) {
  std::unique_ptr<Console> console(new Console(config, log, clock));
  Console& c = *console;
  observability::Logger& logger = c.logger_;
  auto runtime = config::makeRuntime(config.worker.runtime, clock,
                                     [&logger](std::string_view message) { logger.warn(message); });
  if (!runtime.ok()) return runtime.error();
  runtime::Runtime& backend = **runtime;
  c.pool_ = std::make_unique<ConnectionPool>(config.worker.redis);
  const invocation::StreamKeys keys{config.worker.stream, config.worker.group};
  c.paused_ = std::make_unique<PausedAppsCache>(*c.pool_, keys);
  c.paused_->refresh();
  app::RegistrySettings registry;
  registry.apps_root = config.worker.apps;
  // A paused app is unavailable, as the workers and `relay app ls` see it (docs/cli.md).
  registry.availability = [&backend, &paused = *c.paused_](const app::App& app) {
    if (paused.paused(app.name)) {
      return runtime::Availability{false, std::string(invocation::kPausedReason)};
    }
    return catalog::runtimeAvailability(backend, app);
  };
  auto apps = app::Registry::create(std::move(registry));
  if (!apps.ok()) return apps.error();
  c.apps_ = std::make_unique<AppsView>(std::move(runtime).value(), std::move(apps).value(), clock,
                                       internals.apps_max_age,
                                       [&paused = *c.paused_] { paused.refresh(); });
  if (!config.read_only) {
    c.jobs_ =
        std::make_unique<ReplayJobs>(*c.pool_, *c.apps_, keys.dlq(), config.worker.max_event_bytes);
  }
  c.state_ = std::unique_ptr<ConsoleState>(
      new ConsoleState{c.config_, keys, *c.pool_, *c.apps_, c.jobs_.get(), clock});
  c.guard_ = std::make_unique<ConsoleGuard>(config.token, random.token() + random.token(),
                                            isLoopbackHost(config.address.host), clock,
                                            c.session_random_, internals.guard);
  http::HttpServerSettings settings;
  settings.handler_threads = internals.handler_threads;
  settings.request_timeout = internals.request_timeout;
  // The playground's body is an event as a JSON string: escaping may grow it several times.
  settings.max_body_bytes = 6 * config.worker.max_event_bytes + 64 * 1024;
  settings.max_request_bytes = 16 * 1024;
  auto server = http::HttpServer::create(config.address, settings, clock);
  if (!server.ok()) {
    return Error::unavailable("RELAY_CONSOLE_ADDR=" + config.address.toString() + ": " +
                              server.error().message);
  }
  c.server_ = std::move(server).value();
  c.routes();
  return console;
}

void Console::read(const std::string& path, Handler handler, const std::string& method) {
  server_->handle(
      path,
      [this, handler = std::move(handler)](const HttpRequest& request) {
        if (auto refused = guard_->checkRead(request)) return guard_->secure(*refused);
        return guard_->secure(handler(request));
      },
      method);
}

void Console::mutate(const std::string& path, Handler handler) {
  if (config_.read_only) return;  // no mutation endpoint exists at all
  server_->handle(
      path,
      [this, handler = std::move(handler)](const HttpRequest& request) {
        if (auto refused = guard_->checkMutation(request)) return guard_->secure(*refused);
        return guard_->secure(handler(request));
      },
      "POST");
}

void Console::routes() {
  ConsoleState& state = *state_;
  for (const Asset& asset : embeddedAssets()) {
    const HttpReply reply{200, std::string(asset.body), std::string(asset.content_type)};
    // Static files carry no data: only the Host check applies, so the login page loads.
    const auto serve = [this, reply](const HttpRequest& request) {
      if (auto refused = guard_->checkHost(request)) return guard_->secure(*refused);
      return guard_->secure(reply);
    };
    server_->handle(std::string(asset.path), serve);
    if (asset.path == "/index.html") server_->handle("/", serve);
  }
  server_->handle("/api/session", [this, &state](const HttpRequest& request) {
    if (auto refused = guard_->checkHost(request)) return guard_->secure(*refused);
    return guard_->secure(session(state, *guard_, request));
  });
  server_->handle(
      "/api/login",
      [this](const HttpRequest& request) {
        if (auto refused = guard_->checkLogin(request)) return guard_->secure(*refused);
        return guard_->secure(login(*guard_, request));
      },
      "POST");
  server_->handle(
      "/api/logout",
      [this](const HttpRequest& request) {
        if (auto refused = guard_->checkLogin(request)) return guard_->secure(*refused);
        return guard_->secure(logout(*guard_, request));
      },
      "POST");
  read("/api/overview", [&state](const HttpRequest& r) { return overview(state, r); });
  read("/api/apps", [&state](const HttpRequest& r) { return listApps(state, r); });
  read("/api/pending", [&state](const HttpRequest& r) { return pendingMessages(state, r); });
  read("/api/dlq", [&state](const HttpRequest& r) { return listDeadLetters(state, r); });
  read("/api/dlq/entry", [&state](const HttpRequest& r) { return inspectDeadLetter(state, r); });
  read(
      "/api/playground", [&state](const HttpRequest& r) { return playground(state, r); }, "POST");
  read("/api/replays", [&state](const HttpRequest& r) { return replays(state, r); });
  read("/api/jobs", [&state](const HttpRequest& r) { return replayStatus(state, r); });
  mutate("/api/dlq/delete", [&state](const HttpRequest& r) { return removeDeadLetters(state, r); });
  mutate("/api/dlq/replay", [&state](const HttpRequest& r) { return replayDeadLetters(state, r); });
  mutate("/api/cancel", [&state](const HttpRequest& r) { return cancelInvocations(state, r); });
}

Status Console::start() {
  if (auto started = server_->start(); !started.ok()) return started;
  logger_.info("relay console serving",
               {{"url", "http://" + server_->address().toString() + "/"},
                {"redis", config_.worker.redis.describe()},
                {"stream", config_.worker.stream},
                {"group", config_.worker.group},
                {"apps", config_.worker.apps.string()},
                {"runtime", std::string(config::backendName(config_.worker.runtime.backend))},
                {"read_only", config_.read_only ? "true" : "false"},
                {"login", guard_->tokenRequired() ? "RELAY_CONSOLE_TOKEN" : "none (loopback)"}});
  return {};
}

void Console::stop() {
  if (server_) server_->stop();
}

}  // namespace relay::console
