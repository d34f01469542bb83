#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <ostream>

#include "app/registry.h"
#include "catalog/registry_catalog.h"
#include "catalog/schedule_publisher.h"
#include "common/clock.h"
#include "common/random.h"
#include "common/stop_signal.h"
#include "common/unique_fd.h"
#include "config/config.h"
#include "history/replay_driver.h"
#include "http/server.h"
#include "invocation/claim_renewer.h"
#include "invocation/concurrency_limiter.h"
#include "invocation/health_reporting_store.h"
#include "invocation/lifecycle.h"
#include "invocation/lifecycle_observer.h"
#include "invocation/redis_lifecycle_store.h"
#include "invocation/running_attempts.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "runtime/runtime.h"
#include "stream/consumer.h"
#include "stream/trimmer.h"
#include "tracing/tracer.h"
#include "worker/archive_loop.h"
#include "worker/cancel_watcher.h"
#include "worker/housekeeper.h"
#include "worker/pause_watcher.h"
#include "worker/redis_template_keeper.h"
#include "worker/systemd_notifier.h"

namespace relay::worker {

/// Fixed internals the binary never changes; tests pass shorter waits and backoffs here.
struct WorkerInternals {
  stream::ConsumerSettings consumer;        // stream/group/consumer/workers from the config
  invocation::LifecycleSettings lifecycle;  // keys/consumer are taken from the config
  invocation::RenewerSettings renewal;      // its claim times are the lifecycle's
  std::chrono::milliseconds availability_refresh{30'000};
  /// How long a graceful stop keeps repeating the outcomes Redis has not recorded yet (an
  /// outage at the end of a handler) before it exits with them owed (docs/pipeline.md
  /// "Stopping").
  std::chrono::milliseconds owed_patience{30'000};
  /// Called for every delivery before it is processed (a test seam: relay_test_worker makes a
  /// poison message with it, docs/pipeline.md "Poison messages"); the binary sets none.
  std::function<void(const invocation::Message&)> on_message;
  /// How often kept templates that could not be fetched or kept for want of Redis are tried
  /// again (docs/apps.md "Loaded, available, and reloads").
  std::chrono::milliseconds kept_template_retry{2'000};
  HousekeepingSettings housekeeping;      // pending gauge, readiness, retention
  catalog::PublisherSettings schedules;   // the stream is taken from the config
  catalog::OccurrenceChecks occurrences;  // the publication check is the worker's own
  PauseSettings pauses;
  CancelSettings cancels;
  history::ReplayDriverSettings replays;  // keys and consumer are taken from the config
  /// The archiver's pace, lease and batches (docs/replay.md "Archive").
  history::ArchiverSettings archiver;
};

/// The composition root of `relay start`: builds the logger, metrics, runtime, app registry,
/// invocation lifecycle and its stores, and the consumer from the configuration, and runs them.
class Worker {
 public:
  static Result<std::unique_ptr<Worker>> create(const config::WorkerConfig& config,
                                                std::ostream& log, Clock& clock, Random& random,
                                                WorkerInternals internals = {});
  ~Worker();

  /// Runs until stop(): consumes the stream and reloads apps when their files change. Returns
  /// when every running invocation has finished. Blocks.
  void run();
  /// Graceful stop: stop reading, let running invocations finish, release the claims of those
  /// that had not started, leave the rest pending. Thread-safe, non-blocking.
  void stop();
  /// The second signal: stop at once. Releases the claims of the running handlers (nothing
  /// charged, due again after their timeout; docs/pipeline.md "Stopping") and returns; the
  /// caller then ends the process, and the handlers die with it. Thread-safe; blocks for the
  /// releases (one script each).
  void abort();

  observability::Metrics& metrics() { return metrics_; }
  observability::Logger& logger() { return logger_; }
  const app::Registry& registry() const { return *registry_; }
  /// Where /metrics, /healthz and /readyz are served (the real port when RELAY_HTTP_ADDR asked
  /// for port 0).
  const http::Address& httpAddress() const { return http_->address(); }

 private:
  Worker(const config::WorkerConfig& config, std::ostream& log, Clock& clock, Random& random);
  void watchApps();
  /// What the template keeper owes: keeps again, reloads the apps whose recall failed.
  void retryKeeper();
  /// The relay-systemd thread: READY=1 once the consumer group exists (the apps are loaded
  /// before run()), WATCHDOG=1 every half interval while the reader is alive (readerAlive),
  /// STOPPING=1 when the stop begins.
  void notifySystemd();
  /// Binds RELAY_HTTP_ADDR and registers the endpoints; serving starts in run().
  Status serveEndpoints();

  config::WorkerConfig config_;
  Clock& clock_;
  observability::Metrics metrics_;
  observability::Logger logger_;
  std::unique_ptr<runtime::Runtime> runtime_;
  std::unique_ptr<RedisTemplateKeeper> keeper_;  // before the registry, which calls it
  std::unique_ptr<PauseWatcher> pauses_;         // before the registry: its availability asks it
  std::unique_ptr<app::Registry> registry_;
  std::unique_ptr<invocation::ConcurrencyLimiter> limiter_;
  std::unique_ptr<catalog::RedisPublicationCheck> publications_;  // before the catalog using it
  std::unique_ptr<catalog::RegistryCatalog> catalog_;
  /// The span exporter when OTEL_* turn tracing on (docs/tracing.md); null otherwise. Before the
  /// observer that uses it, so that it is destroyed (and flushes) after the message threads.
  std::unique_ptr<tracing::Tracer> tracer_;
  /// The lifecycle's hooks (tracing, docs/pipeline.md "Observer"); the default does nothing.
  std::unique_ptr<invocation::LifecycleObserver> observer_;
  /// How the lifecycle's store calls go, for /healthz: every store below reports to it.
  std::unique_ptr<invocation::StoreHealth> store_health_;
  /// The group commit every store below sends its calls through (docs/pipeline.md "Group
  /// commit"); here for its counts in /metrics.
  std::shared_ptr<redis::GroupCommit> group_;
  std::unique_ptr<invocation::LifecycleStore> renewer_store_;
  std::unique_ptr<invocation::ClaimRenewer> renewer_;
  /// The attempts running here, which the cancel watcher stops (docs/pipeline.md
  /// "Cancellation"); before the lifecycle that registers them.
  invocation::RunningAttempts running_;
  std::unique_ptr<CancelWatcher> cancels_;
  std::unique_ptr<invocation::Lifecycle> lifecycle_;
  std::unique_ptr<stream::Consumer> consumer_;
  std::unique_ptr<stream::Trimmer> trimmer_;
  std::unique_ptr<stream::ThroughputRecorder> throughput_;
  std::unique_ptr<Housekeeper> housekeeper_;
  std::unique_ptr<ArchiveLoop> archive_;
  std::unique_ptr<catalog::SchedulePublisher> publisher_;
  /// Publishes the copies of the replays this worker takes up (docs/replay.md "Driving").
  std::unique_ptr<history::ReplayDriver> replays_;
  /// READY=1, WATCHDOG=1 and STOPPING=1 for systemd (docs/deployment.md "systemd"); null
  /// when NOTIFY_SOCKET is unset.
  std::unique_ptr<SystemdNotifier> systemd_;
  StopSignal systemd_stop_;
  std::unique_ptr<http::HttpServer> http_;  // last: its handlers use the members above
  WorkerInternals internals_;
  std::atomic<bool> stopping_{false};
  /// An eventfd stop() writes to: the apps watcher waits on it beside inotify, so an idle
  /// worker's watcher wakes for a file change, a stop or the availability refresh, nothing else.
  UniqueFd stop_fd_;
};

}  // namespace relay::worker
