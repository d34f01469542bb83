// The LifecycleStore contract against the in-memory store of the unit tests; the same suite runs
// against Redis in tests/integration/invocation/redis_lifecycle_store_test.cpp.
#include <gtest/gtest.h>

#include "contract/flow_contract.h"
#include "contract/lifecycle_store_contract.h"
#include "contract/lifecycle_store_endings_contract.h"
#include "fakes/fake_clock.h"
#include "fakes/in_memory_lifecycle_store.h"

namespace relay::invocation::contract {
namespace {

class InMemoryBackend {
 public:
  LifecycleStore& store() { return store_; }
  // Ids carry the store's time, as Redis's do: deadlines count from them.
  std::string deliver() {
    const std::string id = publish();
    store_.deliver(id);
    return id;
  }
  std::string publish() {
    const std::string id = std::to_string(store_.nowMs()) + "-" + std::to_string(++next_);
    store_.publish(id);
    return id;
  }
  void read(const std::string& id) { store_.deliver(id); }
  std::vector<std::tuple<std::string, std::string, std::string>> cancels() {
    return store_.cancels();
  }
  void pass(std::chrono::milliseconds duration) { clock_.advance(duration); }
  bool pending(const std::string& id) { return store_.pending(id); }
  std::optional<std::string> field(const std::string& id, const std::string& name) {
    return store_.field(id, name);
  }
  std::optional<std::chrono::milliseconds> ttl(const std::string& id) { return store_.ttl(id); }
  std::vector<std::map<std::string, std::string>> dlq() {
    std::vector<std::map<std::string, std::string>> entries;
    for (const auto& fields : store_.dlq()) entries.emplace_back(fields.begin(), fields.end());
    return entries;
  }
  std::optional<std::int64_t> dueAt(const std::string& id) { return store_.dueAt(id); }
  std::int64_t nowMs() { return store_.nowMs(); }
  std::vector<AttemptRecord> attempts(const std::string& id) { return store_.attempts(id); }
  void breakJournal(const std::string& id) { store_.breakJournal(id); }
  void takeBack(const std::string& id) { store_.claimFor(id, "w1", /*justid=*/true); }
  std::string owner(const std::string& id) { return store_.owner(id); }
  void pause(const std::string& app) { store_.pause(app); }
  void resume(const std::string& app) { store_.resume(app); }
  bool parkedFor(const std::string& app, const std::string& id) {
    return store_.parkedFor(app, id);
  }
  void redeliver(const std::string& id) { store_.deliver(id); }
  long long stat(const std::string& field, const std::string& counter) {
    return store_.stat(field, counter);
  }

 private:
  relay::testing::FakeClock clock_;
  relay::testing::InMemoryLifecycleStore store_{clock_};
  int next_ = 0;
};

INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, LifecycleStoreContract, InMemoryBackend);
INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, FlowControlContract, InMemoryBackend);
INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, LifecycleStoreEndings, InMemoryBackend);

}  // namespace
}  // namespace relay::invocation::contract
