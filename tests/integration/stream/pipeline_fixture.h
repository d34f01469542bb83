#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "app/registry.h"
#include "catalog/registry_catalog.h"
#include "common/random.h"
#include "common/system_clock.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/temp_dir.h"
#include "invocation/claim_renewer.h"
#include "invocation/concurrency_limiter.h"
#include "invocation/lifecycle.h"
#include "invocation/redis_lifecycle_store.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/group_commit.h"
#include "stream/consumer.h"
#include "support/redis_server.h"

namespace relay::stream::testing {

/// A real redis-server, an apps root in a temp dir, a scripted FakeRuntime and a FakeClock for
/// the worker, wired exactly as the worker wires them, with the fixed internals shortened:
/// reclaim takes every pending message (min idle 0) and the backoff is kBackoff (deadlines are
/// Redis TIME, which no FakeClock moves: a test waits for the backoff for real, briefly).
class PipelineTest : public relay::testing::RedisTest {
 protected:
  static constexpr std::chrono::milliseconds kBackoff{400};

  void SetUp() override;

  /// Writes apps/<name>/template.yaml and an executable for every `bin/*.sh` handler named.
  void writeApp(const std::string& name, const std::string& yaml,
                const std::vector<std::string>& handlers);
  /// Builds registry, catalog, stores, lifecycle and consumer (after the apps are written).
  void build(int max_concurrency = 16);
  /// A catalog over `registry` configured as build() configures the worker's.
  std::unique_ptr<catalog::RegistryCatalog> makeCatalog(const app::Registry& registry);
  /// Another worker on the same stream (a replica), with its own clock and catalog (another
  /// version of the apps) if given.
  std::unique_ptr<invocation::Lifecycle> replicaLifecycle(const std::string& consumer,
                                                          Clock* clock = nullptr,
                                                          invocation::Catalog* catalog = nullptr);
  /// A store as every worker thread has: its calls go through the group commit that every
  /// store of `consumer` shares (one per worker), its own connection when the group cannot
  /// answer.
  std::unique_ptr<invocation::RedisLifecycleStore> newStore(
      const std::string& consumer = "worker-1");
  /// Waits (real time, briefly) until a failed attempt's backoff has passed on Redis's clock.
  void waitForBackoff();

  std::string xadd(const std::string& event);
  std::string xaddFields(const std::vector<std::string>& fields);
  int readOnce();
  /// The due-retry poller's take of what is due, then a reclaim sweep (min idle 0 here): every
  /// message a worker's background loops would bring back now. Returns how many.
  int reclaim();
  long long pendingCount();
  /// Whether the group has delivered everything up to `last_id` and nothing is pending: the
  /// end of a run (the PEL alone can be empty for a moment between two reads).
  bool caughtUp(const std::string& last_id);
  /// Waits (real time, up to 10 s) for caughtUp(); returns it.
  bool waitCaughtUp(const std::string& last_id);
  std::string marker(const std::string& id, const std::string& field);
  long long ttlOf(const std::string& key);
  std::vector<std::map<std::string, std::string>> dlqEntries();
  StreamEntry entryOf(const std::string& id);
  /// XCLAIM ... JUSTID of a pending `id` by `consumer`, as a replica's reclaim or due poll does
  /// before it processes a message (only the PEL owner starts one).
  void claimFor(const std::string& id, const std::string& consumer);

  relay::testing::FakeClock clock_;
  SystemClock real_clock_;
  SystemRandom random_;
  relay::testing::FakeRuntime runtime_;
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kDebug};
  relay::testing::TempDir apps_;
  std::unique_ptr<redis::Connection> redis_;
  const invocation::StreamKeys keys_{"events", "relay"};
  std::size_t max_event_bytes_ = catalog::kDefaultMaxEventBytes;
  std::chrono::milliseconds retention_ = std::chrono::hours(24 * 7);
  app::TemplateKeeper keeper_hook_;  // the registry's kept templates (empty: none)
  invocation::LifecycleSettings lifecycle_settings_;
  std::unique_ptr<app::Registry> registry_;
  catalog::OccurrenceChecks occurrence_checks_;  // makeCatalog() adds the publication check
  std::unique_ptr<catalog::PublicationCheck> publication_check_;
  std::unique_ptr<catalog::RegistryCatalog> catalog_;
  std::unique_ptr<invocation::ConcurrencyLimiter> limiter_;
  invocation::LifecycleObserver observer_;
  std::unique_ptr<invocation::RedisLifecycleStore> store_;  // the test's own
  std::unique_ptr<invocation::RedisLifecycleStore> renewer_store_;
  std::unique_ptr<invocation::ClaimRenewer> renewer_;
  std::unique_ptr<invocation::Lifecycle> lifecycle_;
  ConsumerSettings consumer_settings_;  // SetUp() shortens the waits, build() names the consumer
  /// The consumer's clock (nullptr: clock_). On clock_ its background loops never wait: each
  /// wait advances the clock instead, so the due poller and the reclaimer turn all the time.
  Clock* consumer_clock_ = nullptr;
  std::unique_ptr<Consumer> consumer_;
  std::mutex groups_mutex_;  // newStore() runs on the consumer's threads too
  std::map<std::string, std::shared_ptr<redis::GroupCommit>> groups_;  // by consumer
};

}  // namespace relay::stream::testing
