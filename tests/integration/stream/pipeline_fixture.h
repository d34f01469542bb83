#pragma once

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/registry.h"
#include "common/random.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/temp_dir.h"
#include "invocation/invocation_store.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "stream/concurrency_limiter.h"
#include "stream/consumer.h"
#include "stream/dispatcher.h"
#include "support/redis_server.h"

namespace relay::stream::testing {

/// A real redis-server, an apps root in a temp dir, a scripted FakeRuntime and a FakeClock,
/// wired exactly as the worker wires them, with the fixed internals shortened: reclaim takes
/// every pending message (min idle 0) and the backoff is the real 1m, 2m, 5m, 10m table, which
/// the FakeClock skips through.
class PipelineTest : public relay::testing::RedisTest {
 protected:
  void SetUp() override;

  /// Writes apps/<name>/template.yaml and an executable for every `bin/*.sh` handler named.
  void writeApp(const std::string& name, const std::string& yaml,
                const std::vector<std::string>& handlers);
  /// Builds registry, store, dispatcher and consumer (after the apps are written).
  void build(int max_concurrency = 16);
  /// A second, independent worker on the same stream (another replica).
  std::unique_ptr<Dispatcher> replicaDispatcher(const std::string& consumer);

  std::string xadd(const std::string& event);
  std::string xaddFields(const std::vector<std::string>& fields);
  int readOnce();
  int reclaim();
  long long pendingCount();
  std::string marker(const std::string& id, const std::string& field);
  long long ttlOf(const std::string& key);
  std::vector<std::map<std::string, std::string>> dlqEntries();
  StreamEntry entryOf(const std::string& id);

  relay::testing::FakeClock clock_;
  SystemRandom random_;
  relay::testing::FakeRuntime runtime_;
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kDebug};
  relay::testing::TempDir apps_;
  std::unique_ptr<redis::Connection> redis_;
  std::unique_ptr<app::Registry> registry_;
  invocation::InvocationStore store_{invocation::StreamKeys{"events", "relay"}, clock_, random_};
  std::unique_ptr<ConcurrencyLimiter> limiter_;
  DispatchSettings dispatch_settings_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<Consumer> consumer_;
};

}  // namespace relay::stream::testing
