#pragma once
// The worker's pipeline for the in-process benchmarks: a registry over an apps root, the
// catalog, the lifecycle with its renewer and stores, and the consumer with its pool, wired as
// src/worker wires them, on the real clock.
#include <atomic>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "app/registry.h"
#include "catalog/registry_catalog.h"
#include "common/random.h"
#include "common/system_clock.h"
#include "invocation/claim_renewer.h"
#include "invocation/concurrency_limiter.h"
#include "invocation/lifecycle.h"
#include "invocation/redis_lifecycle_store.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "stream/consumer.h"

namespace relay::bench {

/// The registry catalog, counting its classifications (decode + match): how many a delivery
/// costs is one of the pipeline benchmark's figures.
class CountingCatalog final : public invocation::Catalog {
 public:
  CountingCatalog(app::Registry& registry, std::size_t max_event_bytes)
      : inner_(registry, max_event_bytes) {}
  invocation::Classification classify(const invocation::Message& message, WallTime now) override {
    classifications_.fetch_add(1, std::memory_order_relaxed);
    return inner_.classify(message, now);
  }
  invocation::Runnable resolve(const invocation::PlannedInvocation& invocation) override {
    return inner_.resolve(invocation);
  }
  long long classifications() const { return classifications_.load(); }

 private:
  catalog::RegistryCatalog inner_;
  std::atomic<long long> classifications_{0};
};

/// One benchmarked worker on `stream` (consumer `bench`); `tune` adjusts the consumer's settings
/// before it is built. Not copyable; run() blocks like Consumer::run().
class WorkerRig {
 public:
  WorkerRig(const redis::Endpoint& endpoint, const std::filesystem::path& apps,
            const std::string& stream, runtime::Runtime& runtime, int max_concurrency,
            stream::ConsumerSettings consumer_settings = {})
      : registry_(std::move(app::Registry::create({apps, {}, {}})).value()),
        catalog_(*registry_, catalog::kDefaultMaxEventBytes),
        limiter_(max_concurrency),
        store_(storeSettings(stream)),
        renewer_store_(store_, endpoint, clock_),
        renewer_({}, renewer_store_, metrics_, logger_, clock_),
        lifecycle_(settings(store_), catalog_, runtime, limiter_, &renewer_, observer_, metrics_,
                   logger_, clock_, random_) {
    consumer_settings.stream = stream;
    consumer_settings.consumer = "bench";
    consumer_settings.workers = max_concurrency;
    consumer_ = std::make_unique<stream::Consumer>(
        consumer_settings, endpoint, lifecycle_,
        [this, endpoint]() -> std::unique_ptr<invocation::LifecycleStore> {
          return std::make_unique<invocation::RedisLifecycleStore>(store_, endpoint, clock_);
        },
        metrics_, logger_, clock_);
  }
  WorkerRig(const WorkerRig&) = delete;
  WorkerRig& operator=(const WorkerRig&) = delete;

  stream::Consumer& consumer() { return *consumer_; }
  observability::Metrics& metrics() { return metrics_; }
  SystemClock& clock() { return clock_; }
  /// Decodes and matches so far (every Catalog::classify call).
  long long classifications() const { return catalog_.classifications(); }

 private:
  static invocation::RedisStoreSettings storeSettings(const std::string& stream) {
    invocation::RedisStoreSettings store;
    store.keys = {stream, "relay"};
    store.consumer = "bench";
    return store;
  }
  static invocation::LifecycleSettings settings(const invocation::RedisStoreSettings& store) {
    invocation::LifecycleSettings settings;
    settings.keys = store.keys;
    settings.consumer = store.consumer;
    return settings;
  }

  SystemClock clock_;
  SystemRandom random_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kWarn};
  observability::Metrics metrics_;
  invocation::LifecycleObserver observer_;
  std::unique_ptr<app::Registry> registry_;
  CountingCatalog catalog_;
  invocation::ConcurrencyLimiter limiter_;
  invocation::RedisStoreSettings store_;
  invocation::RedisLifecycleStore renewer_store_;
  invocation::ClaimRenewer renewer_;
  invocation::Lifecycle lifecycle_;
  std::unique_ptr<stream::Consumer> consumer_;
};

}  // namespace relay::bench
