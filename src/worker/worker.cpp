#include "worker/worker.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "app/watcher.h"
#include "catalog/invocation_spec.h"
#include "common/duration.h"
#include "common/rfc3339.h"
#include "common/size.h"
#include "common/thread_name.h"
#include "config/runtime_factory.h"
#include "invocation/paused_apps.h"
#include "pattern/pattern_text.h"
#include "redis/group_commit.h"
#include "redis/topology.h"
#include "runtime/sandbox/sandbox_runtime.h"
#include "tracing/tracing_observer.h"
#include "worker/endpoints.h"

namespace relay::worker {
namespace {

/// The observer with WorkerInternals::on_message in front of it.
class HookedObserver final : public invocation::LifecycleObserver {
 public:
  HookedObserver(std::unique_ptr<invocation::LifecycleObserver> inner,
                 std::function<void(const invocation::Message&)> hook)
      : inner_(std::move(inner)), hook_(std::move(hook)) {}
  void onMessage(const invocation::Message& message) override {
    hook_(message);
    inner_->onMessage(message);
  }
  void onClassified(const invocation::Message& message,
                    const invocation::Classification& classification) override {
    inner_->onClassified(message, classification);
  }
  void onAttemptStart(const invocation::AttemptInfo& attempt,
                      std::vector<std::pair<std::string, std::string>>& env) override {
    inner_->onAttemptStart(attempt, env);
  }
  void onAttemptEnd(const invocation::AttemptInfo& attempt,
                    const runtime::Outcome* outcome) override {
    inner_->onAttemptEnd(attempt, outcome);
  }

 private:
  std::unique_ptr<invocation::LifecycleObserver> inner_;
  std::function<void(const invocation::Message&)> hook_;
};

// The stream-wide archive of RELAY_ARCHIVE_RETENTION and RELAY_ARCHIVE_PATTERN_FILE (nullopt:
// none): a pattern file that cannot be read or compiled stops the start, naming it.
Result<std::optional<history::StreamArchive>> streamArchive(const config::WorkerConfig& config) {
  if (config.archive_retention.count() == 0) return std::optional<history::StreamArchive>();
  history::StreamArchive archive;
  archive.retention = config.archive_retention;
  if (!config.archive_pattern_file.empty()) {
    const std::string shown = config.archive_pattern_file.string();
    std::ifstream in(config.archive_pattern_file, std::ios::binary);
    if (!in) {
      return Error::invalid("RELAY_ARCHIVE_PATTERN_FILE=" + shown + ": cannot be read (" +
                            std::strerror(errno) + ")");
    }
    std::ostringstream text;
    text << in.rdbuf();
    auto compiled = pattern::compileText(text.str(), shown);
    if (auto* problems = std::get_if<std::vector<std::string>>(&compiled)) {
      std::string message = "RELAY_ARCHIVE_PATTERN_FILE: not a valid pattern:";
      for (const std::string& problem : *problems) message += "\n  " + problem;
      return Error::invalid(message);
    }
    archive.pattern = std::get<std::shared_ptr<const pattern::Pattern>>(std::move(compiled));
  }
  return std::optional<history::StreamArchive>(std::move(archive));
}

}  // namespace

Worker::Worker(const config::WorkerConfig& config, std::ostream& log, Clock& clock, Random& random)
    : config_(config),
      clock_(clock),
      logger_(log, clock, config.log_level, config.log_format),
      stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {  // -1 (none) if refused: see watchApps
  (void)random;
}

Worker::~Worker() { stop(); }

Result<std::unique_ptr<Worker>> Worker::create(const config::WorkerConfig& config,
                                               std::ostream& log, Clock& clock, Random& random,
                                               WorkerInternals internals) {
  // A Redis that refuses this configuration (TLS, login, a cluster stream without a hash tag)
  // stops `relay start` now; an unreachable one is waited for by the loops, as after a crash.
  if (auto probe = redis::Connection::create(config.redis); !probe.ok()) {
    if (redis::retryCannotHelp(probe.error())) {
      return Error::invalid("redis at " + config.redis.describe() + ": " + probe.error().message);
    }
  }
  std::unique_ptr<Worker> worker(new Worker(config, log, clock, random));
  Worker& w = *worker;
  observability::Logger& logger = w.logger_;
  auto runtime = config::makeRuntime(
      config.runtime, clock, [&logger](std::string_view message) { logger.warn(message); },
      config.max_concurrency,
      /*prewarm=*/true);
  if (!runtime.ok()) return runtime.error();
  w.runtime_ = std::move(runtime).value();
  // Only a starting worker cleans up after a crashed one (never the CLI). An unreachable daemon
  // is not fatal here: apps show it as their availability reason.
  if (auto reaped = w.runtime_->reapStale(); reaped.ok() && *reaped > 0) {
    logger.warn("removed " + std::to_string(*reaped) + " containers left by a crashed Relay");
  }
  // Which builds the sandboxes, and why (docs/runtimes.md "Native launcher").
  if (const auto* sandbox = dynamic_cast<const runtime::SandboxRuntime*>(w.runtime_.get());
      sandbox != nullptr && !sandbox->launcherChoice().empty()) {
    logger.info("sandbox launcher: " + sandbox->launcherChoice());
  }
  if (config.runtime.backend == config::Backend::kProcess) {
    w.logger_.warn("RELAY_RUNTIME=process runs handlers WITHOUT isolation: development only");
  }
  runtime::Runtime& backend = *w.runtime_;
  const invocation::StreamKeys keys{config.stream, config.group};
  w.pauses_ = std::make_unique<PauseWatcher>(internals.pauses, config.redis, keys, w.metrics_,
                                             w.logger_, clock);
  app::RegistrySettings registry;
  registry.apps_root = config.apps;
  // A paused app stays available here: the start script checks the paused set itself, so no
  // attempt starts once `relay app pause` returned, whatever this worker last polled, and its
  // messages wait in the paused queue until the resume (docs/cli.md "Pausing an app").
  registry.availability = [&backend](const app::App& app) {
    return catalog::runtimeAvailability(backend, app);
  };
  w.keeper_ = std::make_unique<RedisTemplateKeeper>(config.redis, keys, w.metrics_, w.logger_);
  registry.keeper = w.keeper_->keeper();
  auto apps = app::Registry::create(std::move(registry));
  if (!apps.ok()) return apps.error();
  w.registry_ = std::move(apps).value();

  w.internals_ = std::move(internals);
  invocation::RedisStoreSettings store;
  store.keys = keys;
  store.consumer = config.consumer;
  store.retention = config.invocation_retention;
  // Every store of this worker (the pool threads', the reader's, the renewer's) sends its calls
  // through one group commit: the calls ready together share one round trip.
  store.group = std::make_shared<redis::GroupCommit>(config.redis, store.connection, clock);
  w.group_ = store.group;
  w.limiter_ = std::make_unique<invocation::ConcurrencyLimiter>(config.max_concurrency);
  w.publications_ = std::make_unique<catalog::RedisPublicationCheck>(config.redis, config.stream);
  catalog::OccurrenceChecks occurrences = w.internals_.occurrences;
  occurrences.published = w.publications_.get();
  w.catalog_ = std::make_unique<catalog::RegistryCatalog>(*w.registry_, config.max_event_bytes,
                                                          occurrences, config.group);
  if (config.tracing) {
    // docs/tracing.md: spans continue the producer's trace, handlers get TRACEPARENT.
    auto tracer =
        tracing::Tracer::load(*config.tracing, w.logger_, tracing::Tracer::defaultModule());
    if (!tracer.ok()) return tracer.error();
    w.tracer_ = std::move(tracer).value();
    w.observer_ = std::make_unique<tracing::TracingObserver>(*w.tracer_, config.stream, w.logger_);
    w.logger_.info("tracing on", {{"traces_url", config.tracing->traces_url},
                                  {"service", config.tracing->service_name}});
  } else {
    w.observer_ = std::make_unique<invocation::LifecycleObserver>();
  }
  if (w.internals_.on_message) {
    w.observer_ = std::make_unique<HookedObserver>(std::move(w.observer_), w.internals_.on_message);
  }
  w.store_health_ = std::make_unique<invocation::StoreHealth>(clock);
  w.renewer_store_ = std::make_unique<invocation::HealthReportingStore>(
      std::make_unique<invocation::RedisLifecycleStore>(store, config.redis, clock),
      *w.store_health_);
  invocation::LifecycleSettings lifecycle = w.internals_.lifecycle;
  lifecycle.keys = keys;
  lifecycle.consumer = config.consumer;
  invocation::RenewerSettings renewal = w.internals_.renewal;
  renewal.claim = lifecycle.claim;
  w.renewer_ = std::make_unique<invocation::ClaimRenewer>(renewal, *w.renewer_store_, w.metrics_,
                                                          w.logger_, clock);
  w.lifecycle_ = std::make_unique<invocation::Lifecycle>(
      std::move(lifecycle), *w.catalog_, backend, *w.limiter_, w.renewer_.get(), *w.observer_,
      w.metrics_, w.logger_, clock, random, &w.running_);
  w.cancels_ = std::make_unique<CancelWatcher>(w.internals_.cancels, config.redis, keys, w.running_,
                                               w.metrics_, w.logger_, clock);
  stream::ConsumerSettings consumer = w.internals_.consumer;
  consumer.stream = config.stream;
  consumer.group = config.group;
  consumer.consumer = config.consumer;
  consumer.workers = config.max_concurrency;
  consumer.entry_limits = stream::entryReplyLimits(config.max_event_bytes);
  const redis::Endpoint endpoint = config.redis;
  Clock* store_clock = &clock;
  invocation::StoreHealth* health = w.store_health_.get();
  auto stores = [store, endpoint, store_clock,
                 health]() -> std::unique_ptr<invocation::LifecycleStore> {
    return std::make_unique<invocation::HealthReportingStore>(
        std::make_unique<invocation::RedisLifecycleStore>(store, endpoint, *store_clock), *health);
  };
  w.consumer_ = std::make_unique<stream::Consumer>(std::move(consumer), config.redis, *w.lifecycle_,
                                                   stores, w.metrics_, w.logger_, clock);
  // Flow control's parked work may be due before the due poller's next look (docs/pipeline.md).
  w.lifecycle_->setWakeHook(
      [consumer = w.consumer_.get()](std::int64_t at_ms) { consumer->wakeDue(at_ms); });
  catalog::PublisherSettings schedules = w.internals_.schedules;
  schedules.stream = config.stream;
  w.publisher_ = std::make_unique<catalog::SchedulePublisher>(
      std::move(schedules), config.redis, *w.registry_, w.metrics_, w.logger_, clock);
  history::ReplayDriverSettings replays = w.internals_.replays;
  replays.keys = keys;
  replays.consumer = config.consumer;
  replays.max_event_bytes = config.max_event_bytes;
  replays.stream_retention = config.stream_retention;
  w.replays_ = std::make_unique<history::ReplayDriver>(std::move(replays), config.redis,
                                                       *w.registry_, w.metrics_, w.logger_, clock);
  w.trimmer_ = std::make_unique<stream::Trimmer>(
      keys, stream::RetentionSettings{config.stream_retention, config.dlq_retention}, w.metrics_,
      w.logger_, clock);
  auto stream_archive = streamArchive(config);
  if (!stream_archive.ok()) return stream_archive.error();
  history::ArchiverSettings archiving = w.internals_.archiver;
  archiving.max_event_bytes = config.max_event_bytes;
  app::Registry* registry_ptr = w.registry_.get();
  w.archive_ =
      std::make_unique<ArchiveLoop>(std::make_unique<history::Archiver>(
                                        keys, config.consumer, std::move(stream_archive).value(),
                                        [registry_ptr] { return registry_ptr->snapshot(); },
                                        archiving, w.metrics_, w.logger_, clock),
                                    config.redis, w.metrics_, w.logger_, clock);
  if (auto served = w.serveEndpoints(); !served.ok()) return served.error();
  if (config.systemd) {
    auto notifier = SystemdNotifier::create(*config.systemd);
    if (!notifier.ok()) return notifier.error();
    w.systemd_ = std::move(notifier).value();
  }
  w.throughput_ = std::make_unique<stream::ThroughputRecorder>(keys, w.metrics_, clock);
  w.internals_.housekeeping.consumer = config.consumer;
  w.internals_.housekeeping.heartbeat = nlohmann::json{
      {"consumer", config.consumer},
      {"runtime", std::string(config::backendName(config.runtime.backend))},
      {"http", w.http_->address().toString()},
      {"max_concurrency", config.max_concurrency},
      {"started",
       formatRfc3339(clock.now())}}.dump();
  w.housekeeper_ =
      std::make_unique<Housekeeper>(w.internals_.housekeeping, config.redis, keys, *w.trimmer_,
                                    *w.throughput_, w.metrics_, w.logger_, clock, w.catalog_.get());
  w.pauses_->onChange([&w](const PauseWatcher::Change& change) {
    w.registry_->refreshAvailability();
    // The resume moved the parked backlog to the due index already (invocation/paused_apps.h);
    // what an earlier Relay left pending here for the pause runs now too, not at the sweep.
    if (!change.resumed.empty()) w.consumer_->redriveSoon();
  });
  return worker;
}

Status Worker::serveEndpoints() {
  auto address = http::parseAddress(config_.http_addr);
  if (!address.ok()) return Error::invalid("RELAY_HTTP_ADDR: " + address.error().message);
  auto server = http::HttpServer::create(*address, {}, clock_);
  if (!server.ok()) {
    return Error::unavailable("RELAY_HTTP_ADDR=" + config_.http_addr + ": " +
                              server.error().message);
  }
  http_ = std::move(server).value();
  http_->handle("/metrics", [this](const http::HttpRequest&) {
    // Every connection of this worker shares the endpoint's topology, which counts them.
    if (config_.redis.topology) {
      const redis::Topology::Counts counts = config_.redis.topology->counts();
      metrics_.setRedisConnections(counts.reconnects, counts.failovers);
    }
    const redis::GroupCommit::Counts sent = group_->counts();
    metrics_.setGroupCommit(sent.pipelines, sent.calls);
    return http::HttpReply{200, metrics_.exposition(), kPrometheusContentType};
  });
  http_->handle("/healthz", [this](const http::HttpRequest&) {
    return healthReply(consumer_->redisProblem(), store_health_->problem(),
                       config_.redis.describe());
  });
  http_->handle("/status", [this](const http::HttpRequest&) {
    return statusReply(consumer_->redisProblem(), store_health_->problem(),
                       config_.redis.describe(), housekeeper_->groupState(),
                       housekeeper_->streamHealth());
  });
  http_->handle("/readyz", [this](const http::HttpRequest&) {
    return readinessReply(housekeeper_->groupState(), *registry_->snapshot(), stopping_);
  });
  return {};
}

void Worker::watchApps() {
  auto watcher = app::Watcher::create(config_.apps, clock_);
  if (!watcher.ok()) {
    logger_.warn("not watching the apps root: changes need a restart",
                 {{"apps", config_.apps.string()}, {"error", watcher.error().message}});
  }
  MonoTime next_refresh = clock_.monotonicNow() + internals_.availability_refresh;
  MonoTime next_keeper_retry = clock_.monotonicNow() + internals_.kept_template_retry;
  while (!stopping_) {
    // While the keeper owes something (Redis was down) it is retried every few seconds.
    const MonoTime wake =
        keeper_->owed() ? std::min(next_refresh, next_keeper_retry) : next_refresh;
    // Without the eventfd (the kernel refused one) a stop is noticed within half a second.
    const auto until_refresh = std::clamp(
        std::chrono::ceil<std::chrono::milliseconds>(wake - clock_.monotonicNow()),
        std::chrono::milliseconds(0),
        stop_fd_.valid() ? internals_.availability_refresh : std::chrono::milliseconds(500));
    if (watcher.ok()) {
      const app::ChangeSet changes = (*watcher)->poll(until_refresh, stop_fd_.get());
      if (!changes.empty()) {
        const app::ReloadReport report = registry_->reloadChanged(changes);
        for (const auto& [what, names] :
             {std::pair<const char*, const std::vector<std::string>*>{"added", &report.added},
              {"updated", &report.updated},
              {"invalid", &report.invalid},
              {"removed", &report.removed}}) {
          for (const std::string& name : *names) {
            logger_.info(std::string("app ") + what, {{"app", name}});
          }
        }
        // Sandboxes prepared from the old template must not serve the new one.
        for (const auto* names : {&report.updated, &report.invalid, &report.removed}) {
          for (const std::string& name : *names) runtime_->forget(name);
        }
      }
    } else {
      pollfd stop{stop_fd_.get(), POLLIN, 0};
      (void)::poll(&stop, 1,
                   static_cast<int>(std::min<std::int64_t>(until_refresh.count(), 60'000)));
    }
    if (clock_.monotonicNow() >= next_keeper_retry) {
      if (keeper_->owed()) retryKeeper();
      next_keeper_retry = clock_.monotonicNow() + internals_.kept_template_retry;
    }
    if (clock_.monotonicNow() >= next_refresh) {
      // The runtime's state changes outside the apps root (image loaded, daemon started).
      if (registry_->refreshAvailability()) logger_.info("app availability changed");
      next_refresh = clock_.monotonicNow() + internals_.availability_refresh;
    }
  }
}

void Worker::retryKeeper() {
  (void)keeper_->retryKeeps();
  const std::set<std::string> apps = keeper_->owedRecalls();
  if (apps.empty()) return;
  // An app whose template was invalid when Redis could not be asked: reloading it recalls its
  // kept template, which gives its rules (and every other app's events their classification).
  const app::ReloadReport report = registry_->reload(apps);
  bool recalled = false;
  for (const std::string& name : apps) {
    if (keeper_->owedRecalls().contains(name)) continue;
    const app::AppEntry* entry = registry_->snapshot()->find(name);
    recalled = recalled || (entry && entry->app);
    logger_.info(entry && entry->app ? "app rules recalled from redis"
                                     : "no kept template in redis for the app",
                 {{"app", name}});
  }
  for (const auto* names : {&report.updated, &report.invalid, &report.removed}) {
    for (const std::string& name : *names) runtime_->forget(name);
  }
  // What this worker left pending unclassified meanwhile runs now, not at the next sweep.
  if (recalled) consumer_->redriveSoon();
}

void Worker::run() {
  // Paused apps are known before the first message is read (best effort: if Redis does not
  // answer yet, the watcher's next poll applies them).
  if (auto redis = redis::Connection::create(config_.redis); redis.ok()) {
    (void)pauses_->pollOnce(**redis);
    // Cancels are read from here on: an attempt this worker starts can be stopped.
    (void)cancels_->position(**redis);
  }
  pauses_->start();
  cancels_->start();
  const auto snapshot = registry_->snapshot();
  for (const app::AppEntry& entry : snapshot->apps()) {
    metrics_.setAppPaused(entry.name, pauses_->paused(entry.name));
  }
  for (const app::AppEntry& entry : snapshot->apps()) {
    observability::LogFields fields = {{"app", entry.name},
                                       {"loaded", entry.status.loaded ? "true" : "false"},
                                       {"available", entry.status.available ? "true" : "false"}};
    if (!entry.status.reason.empty()) fields.emplace_back("reason", entry.status.reason);
    for (const auto& diagnostic : entry.errors) fields.emplace_back("error", diagnostic.toString());
    logger_.log(
        entry.status.available ? observability::LogLevel::kInfo : observability::LogLevel::kWarn,
        "app", fields);
  }
  logger_.info("relay started",
               {{"redis", config_.redis.describe()},
                {"stream", config_.stream},
                {"group", config_.group},
                {"consumer", config_.consumer},
                {"runtime", std::string(config::backendName(config_.runtime.backend))},
                {"apps", config_.apps.string()},
                {"max_concurrency", std::to_string(config_.max_concurrency)},
                {"max_event_bytes", formatSize(config_.max_event_bytes)},
                {"http", http_->address().toString()}});
  housekeeper_->start();
  archive_->start();
  if (auto serving = http_->start(); !serving.ok()) {
    logger_.error("http endpoints not served", {{"error", serving.error().message}});
  }
  std::thread watcher = namedThread("relay-apps", [this] { watchApps(); });
  std::thread publisher = namedThread("relay-schedules", [this] { publisher_->run(); });
  std::thread renewer = namedThread("relay-renewer", [this] { renewer_->run(); });
  std::thread replays = namedThread("relay-replays", [this] { replays_->run(); });
  std::thread systemd;
  if (systemd_) systemd = namedThread("relay-systemd", [this] { notifySystemd(); });
  consumer_->run();
  // The handlers have ended: a graceful stop's drain could still be cancelled until now.
  cancels_->stop();
  stopping_ = true;
  systemd_stop_.request();
  if (systemd.joinable()) systemd.join();
  renewer_->stop();
  renewer.join();
  // Outcomes Redis has not recorded yet (it was away when their handlers ended) are repeated a
  // while longer: a stop does not turn them into expired claims if Redis comes back in time.
  (void)renewer_->settleOwed(internals_.owed_patience);
  publisher_->stop();
  publisher.join();
  replays_->stop();
  replays.join();
  watcher.join();
  housekeeper_->stop();
  archive_->stop();
  pauses_->stop();
  http_->stop();
  logger_.info("relay stopped");
}

void Worker::notifySystemd() {
  using std::chrono::milliseconds;
  const std::optional<std::chrono::microseconds> watchdog = systemd_->config().watchdog;
  // Readiness is looked at every 100 ms until it comes, the watchdog fed every half interval.
  const auto interval = [&] {
    const milliseconds half =
        watchdog ? std::chrono::duration_cast<milliseconds>(*watchdog / 2) : milliseconds(60'000);
    return std::max(milliseconds(100), half);
  };
  bool ready = false;
  while (!systemd_stop_.requested()) {
    if (!ready && consumer_->groupReady()) {
      ready = true;
      const std::size_t apps = registry_->snapshot()->apps().size();
      systemd_->send("READY=1\nSTATUS=consuming " + config_.stream + " as " + config_.consumer +
                     " in group " + config_.group + ", " + std::to_string(apps) +
                     (apps == 1 ? " app" : " apps") + " loaded");
    }
    if (watchdog && readerAlive(clock_.monotonicNow(), consumer_->readerTurn(),
                                consumer_->readerWaitingForRoom(), *watchdog)) {
      systemd_->send("WATCHDOG=1");
    }
    systemd_stop_.sleepFor(clock_, ready ? interval() : milliseconds(100), &stopping_);
    if (stopping_) break;
  }
  systemd_->send("STOPPING=1\nSTATUS=stopping: running handlers finish");
}

void Worker::stop() {
  stopping_ = true;
  systemd_stop_.nudge();
  if (stop_fd_.valid()) {
    const std::uint64_t one = 1;
    (void)!::write(stop_fd_.get(), &one, sizeof one);  // async-signal-safe; full: already woken
  }
  if (consumer_) consumer_->stop();
  if (publisher_) publisher_->stop();
  if (replays_) replays_->stop();
}

void Worker::abort() {
  stop();
  const std::size_t released = renewer_ ? renewer_->releaseAll() : 0;
  logger_.warn("stopping now: running handlers are killed, their claims released (not charged)",
               {{"released", std::to_string(released)}});
}

}  // namespace relay::worker
