#pragma once

#include <atomic>
#include <memory>
#include <ostream>

#include "app/registry.h"
#include "common/clock.h"
#include "common/random.h"
#include "invocation/invocation_store.h"
#include "observability/http_server.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "runtime/runtime.h"
#include "stream/concurrency_limiter.h"
#include "stream/consumer.h"
#include "stream/dispatcher.h"
#include "stream/schedule_publisher.h"
#include "stream/trimmer.h"
#include "worker/config.h"
#include "worker/housekeeper.h"
#include "worker/pause_watcher.h"

namespace relay::worker {

/// Fixed internals the binary never changes; tests pass shorter waits and backoffs here.
struct WorkerInternals {
  stream::ConsumerSettings consumer;  // stream/group/consumer are taken from the config
  stream::DispatchSettings dispatch;  // consumer/limits/retention are taken from the config
  std::chrono::milliseconds watch_poll{500};
  std::chrono::milliseconds availability_refresh{30'000};
  HousekeepingSettings housekeeping;    // pending gauge, readiness, retention
  stream::PublisherSettings schedules;  // the stream is taken from the config
  PauseSettings pauses;
};

/// The composition root of `relay start`: builds the logger, metrics, runtime, app registry,
/// invocation store, dispatcher and consumer from the configuration, and runs them.
class Worker {
 public:
  static Result<std::unique_ptr<Worker>> create(const WorkerConfig& config, std::ostream& log,
                                                Clock& clock, Random& random,
                                                WorkerInternals internals = {});
  ~Worker();

  /// Runs until stop(): consumes the stream and reloads apps when their files change. Returns
  /// when every running invocation has finished. Blocks.
  void run();
  /// Graceful stop: stop reading, let running invocations finish, leave the rest pending.
  /// Thread-safe, non-blocking.
  void stop();

  observability::Metrics& metrics() { return metrics_; }
  observability::Logger& logger() { return logger_; }
  const app::Registry& registry() const { return *registry_; }
  /// Where /metrics, /healthz and /readyz are served (the real port when RELAY_HTTP_ADDR asked
  /// for port 0).
  const observability::HttpAddress& httpAddress() const { return http_->address(); }

 private:
  Worker(const WorkerConfig& config, std::ostream& log, Clock& clock, Random& random);
  void watchApps();
  /// Binds RELAY_HTTP_ADDR and registers the endpoints; serving starts in run().
  Status serveEndpoints();

  WorkerConfig config_;
  Clock& clock_;
  observability::Metrics metrics_;
  observability::Logger logger_;
  std::unique_ptr<runtime::Runtime> runtime_;
  std::unique_ptr<PauseWatcher> pauses_;  // before the registry: its availability asks it
  std::unique_ptr<app::Registry> registry_;
  std::unique_ptr<invocation::InvocationStore> store_;
  std::unique_ptr<stream::ConcurrencyLimiter> limiter_;
  std::unique_ptr<stream::Dispatcher> dispatcher_;
  std::unique_ptr<stream::Consumer> consumer_;
  std::unique_ptr<stream::Trimmer> trimmer_;
  std::unique_ptr<stream::ThroughputRecorder> throughput_;
  std::unique_ptr<Housekeeper> housekeeper_;
  std::unique_ptr<stream::SchedulePublisher> publisher_;
  std::unique_ptr<observability::HttpServer> http_;  // last: its handlers use the members above
  WorkerInternals internals_;
  std::atomic<bool> stopping_{false};
};

}  // namespace relay::worker
