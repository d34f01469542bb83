// The LifecycleStore contract against RedisLifecycleStore and a real redis-server (the same suite
// runs against the in-memory store in tests/unit/invocation). The store's clock is Redis TIME,
// so letting it pass is a short real wait.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <thread>

#include "common/system_clock.h"
#include "contract/flow_contract.h"
#include "contract/lifecycle_store_contract.h"
#include "contract/lifecycle_store_endings_contract.h"
#include "invocation/paused_apps.h"
#include "invocation/redis_lifecycle_store.h"
#include "stream/stream_entry.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::invocation::contract {
namespace {

class RedisBackend {
 public:
  // `grouped`: the store's calls go through a group commit, as a worker's do.
  explicit RedisBackend(bool grouped = false) {
    auto server = relay::testing::RedisServer::create();
    if (!server.ok()) throw std::runtime_error(server.error().message);
    server_ = std::move(server).value();
    redis_ = server_->connect();
    (void)redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"});
    RedisStoreSettings settings;
    settings.keys = keys_;
    settings.consumer = "w1";
    settings.retention = std::chrono::hours(1);
    if (grouped)
      settings.group = std::make_shared<redis::GroupCommit>(
          server_->endpoint(), redis::ConnectionSettings{}, clock_,
          std::chrono::milliseconds(0));  // no rest after a failure
    store_ = std::make_unique<RedisLifecycleStore>(settings, server_->endpoint(), clock_);
  }
  // The calls the group sent so far; zero without one.
  std::uint64_t groupCalls() const {
    const auto& group = store_->settings().group;
    return group ? group->counts().calls : 0;
  }
  LifecycleStore& store() { return *store_; }
  std::string deliver() {
    auto id = redis_->command({"XADD", "events", "*", "event", R"({"kind":"order"})"});
    (void)redis_->command(
        {"XREADGROUP", "GROUP", "relay", "w1", "COUNT", "1", "STREAMS", "events", ">"});
    return std::string(*id->string());
  }
  std::string publish() {
    auto id = redis_->command({"XADD", "events", "*", "event", R"({"kind":"order"})"});
    return std::string(*id->string());
  }
  void read(const std::string& id) {
    (void)redis_->command(
        {"XREADGROUP", "GROUP", "relay", "w1", "COUNT", "1", "STREAMS", "events", ">"});
    (void)id;
  }
  std::vector<std::tuple<std::string, std::string, std::string>> cancels() {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    auto range = redis_->command({"XRANGE", keys_.cancels(), "-", "+"});
    const auto parsed = stream::parseEntries(range->view());
    if (!parsed.ok()) return out;
    for (const auto& entry : *parsed) {
      out.emplace_back(std::string(entry.valueOf("id")), std::string(entry.valueOf("field")),
                       std::string(entry.valueOf("token")));
    }
    return out;
  }
  void pass(std::chrono::milliseconds duration) { clock_.sleepFor(duration); }
  bool flushScripts() { return redis_->command({"SCRIPT", "FLUSH"}).ok(); }
  // Every connection but the backend's own is closed by the server.
  bool killClients() {
    return redis_->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).ok();
  }
  bool pending(const std::string& id) {
    auto reply = redis_->command({"XPENDING", "events", "relay", id, id, "1"});
    return reply.ok() && reply->size() > 0;
  }
  std::optional<std::string> field(const std::string& id, const std::string& name) {
    auto reply = redis_->command({"HGET", keys_.state(id), name});
    auto text = reply->optionalString();
    if (!text.ok() || !text->has_value()) return std::nullopt;
    return std::string(**text);
  }
  std::optional<std::chrono::milliseconds> ttl(const std::string& id) {
    const long long ttl = *redis_->command({"PTTL", keys_.state(id)})->integer();
    if (ttl < 0) return std::nullopt;
    return std::chrono::milliseconds(ttl);
  }
  std::vector<std::map<std::string, std::string>> dlq() {
    std::vector<std::map<std::string, std::string>> entries;
    auto range = redis_->command({"XRANGE", keys_.dlq(), "-", "+"});
    const auto parsed = stream::parseEntries(range->view());
    if (!parsed.ok()) return entries;
    for (const auto& entry : *parsed)
      entries.emplace_back(entry.fields.begin(), entry.fields.end());
    return entries;
  }
  std::optional<std::int64_t> dueAt(const std::string& id) {
    auto reply = redis_->command({"ZSCORE", keys_.due(), id});
    auto text = reply->optionalString();
    if (!text.ok() || !text->has_value()) return std::nullopt;
    return std::stoll(std::string(**text));
  }
  std::int64_t nowMs() {
    auto time = redis_->command({"TIME"});
    return std::stoll(std::string(*time->at(0)->string())) * 1000 +
           std::stoll(std::string(*time->at(1)->string())) / 1000;
  }
  std::vector<AttemptRecord> attempts(const std::string& id) {
    auto hash = redis_->command({"HGETALL", keys_.attempts(id)});
    std::vector<std::pair<std::string, std::string>> pairs;
    for (std::size_t i = 0; i + 1 < hash->size(); i += 2) {
      pairs.emplace_back(*hash->at(i)->string(), *hash->at(i + 1)->string());
    }
    // The journal expires with the retention after its last write.
    if (!pairs.empty() && *redis_->command({"PTTL", keys_.attempts(id)})->integer() <= 0) {
      return {};
    }
    return parseAttempts(pairs);
  }
  // A key of another type where the journal goes: every write to it fails (WRONGTYPE).
  void breakJournal(const std::string& id) {
    (void)redis_->command({"SET", keys_.attempts(id), "not a hash"});
  }
  void takeBack(const std::string& id) {
    (void)redis_->command({"XCLAIM", "events", "relay", "w1", "0", id, "JUSTID"});
  }
  std::string owner(const std::string& id) {
    auto reply = redis_->command({"XPENDING", "events", "relay", id, id, "1"});
    if (!reply.ok() || reply->size() == 0) return {};
    return std::string(*reply->at(0)->at(1)->string());
  }
  void pause(const std::string& app) { (void)pauseApp(*redis_, keys_, app); }
  void resume(const std::string& app) { (void)resumeApp(*redis_, keys_, app); }
  bool parkedFor(const std::string& app, const std::string& id) {
    auto reply = redis_->command({"ZSCORE", keys_.pausedQueue(), app + "\n" + id});
    auto text = reply->optionalString();
    return text.ok() && text->has_value();
  }
  long long stat(const std::string& field, const std::string& counter) {
    auto reply = redis_->command({"HGET", keys_.stats(), field + ":" + counter});
    auto text = reply->optionalString();
    if (!text.ok() || !text->has_value()) return 0;
    return std::stoll(std::string(**text));
  }
  // The group re-created at 0: every entry is delivered again.
  void redeliver(const std::string& id) {
    (void)redis_->command({"XGROUP", "SETID", "events", "relay", "0"});
    (void)redis_->command({"XREADGROUP", "GROUP", "relay", "w1", "STREAMS", "events", ">"});
    (void)id;
  }

 private:
  SystemClock clock_;
  StreamKeys keys_{"events", "relay"};
  std::unique_ptr<relay::testing::RedisServer> server_;
  std::unique_ptr<redis::Connection> redis_;
  std::unique_ptr<RedisLifecycleStore> store_;
};

// The same store with its calls sent through a group commit (a worker's stores).
class RedisGroupBackend : public RedisBackend {
 public:
  RedisGroupBackend() : RedisBackend(true) {}
};

INSTANTIATE_TYPED_TEST_SUITE_P(Redis, LifecycleStoreContract, RedisBackend);
INSTANTIATE_TYPED_TEST_SUITE_P(Redis, FlowControlContract, RedisBackend);
INSTANTIATE_TYPED_TEST_SUITE_P(Redis, LifecycleStoreEndings, RedisBackend);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisGroup, LifecycleStoreContract, RedisGroupBackend);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisGroup, FlowControlContract, RedisGroupBackend);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisGroup, LifecycleStoreEndings, RedisGroupBackend);

// settle() pipelines EVALSHA: a server that lost its script cache (restart, failover, SCRIPT
// FLUSH) answers NOSCRIPT inside the pipeline, and each request is run again alone (EVAL).
TEST(RedisLifecycleStoreSettle, RequestsAnsweredNoScriptInThePipelineAreRunAgainAlone) {
  RedisBackend backend;
  const std::string first = backend.deliver();
  const std::string second = backend.deliver();
  ASSERT_TRUE(backend.store().acknowledge(backend.deliver()).ok());  // scripts cached
  ASSERT_TRUE(backend.flushScripts());
  const std::string malformed = backend.deliver();
  const auto verdicts = backend.store().settle({{first, false, std::nullopt},
                                                {malformed, false, dlqFor(malformed, "-", "-", 0)},
                                                {second, false, std::nullopt}});
  ASSERT_EQ(verdicts.size(), 3u);
  for (const auto& verdict : verdicts) ASSERT_TRUE(verdict.ok()) << verdict.error().message;
  EXPECT_EQ(verdicts[0]->ack.kind, AckVerdict::Kind::kAcked);
  ASSERT_TRUE(verdicts[1]->dlq);
  EXPECT_EQ(verdicts[1]->dlq->kind, DlqVerdict::Kind::kWritten);
  EXPECT_EQ(verdicts[2]->ack.kind, AckVerdict::Kind::kAcked);
  for (const std::string& id : {first, malformed, second}) EXPECT_FALSE(backend.pending(id));
}

// All the acknowledgements of a settle() are one script call; its commands take at most 1,000
// ids each, so more messages than Lua's unpack() takes at once (8,000) are all acknowledged.
TEST(RedisLifecycleStoreSettle, MoreAcknowledgementsThanOneCommandTakesAreAllAcked) {
  RedisBackend backend;
  std::vector<SettleRequest> requests;
  for (int i = 0; i < 8'100; ++i) requests.push_back({backend.deliver(), false, std::nullopt});
  const std::string owes = requests[8'050].id;  // one with state: each is looked at alone
  ASSERT_TRUE(
      backend.store().start(owes, startRequest(Plan{{planned("shop", "h")}}, {true}, "t1")).ok());
  const auto verdicts = backend.store().settle(requests);
  ASSERT_EQ(verdicts.size(), requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ASSERT_TRUE(verdicts[i].ok()) << verdicts[i].error().message;
    const bool owed = requests[i].id == owes;
    EXPECT_EQ(verdicts[i]->ack.kind,
              owed ? AckVerdict::Kind::kUnresolved : AckVerdict::Kind::kAcked)
        << i;
    EXPECT_EQ(backend.pending(requests[i].id), owed) << i;
  }
}

// Through a group commit (docs/pipeline.md "Group commit"): what the group cannot answer runs
// again alone on the store's own connection, so a lost script cache or a killed connection costs
// a call nothing.
TEST(RedisLifecycleStoreGroup, ACallTheGroupCannotAnswerRunsAgainAloneAndSucceeds) {
  RedisGroupBackend backend;
  const Plan plan{{planned("shop", "h")}};
  const std::string first = backend.deliver();
  ASSERT_TRUE(backend.store().start(first, startRequest(plan, {true}, "t1")).ok());
  const std::uint64_t sent = backend.groupCalls();
  EXPECT_GE(sent, 1u);  // the call went through the group

  ASSERT_TRUE(backend.flushScripts());  // NOSCRIPT in the group's pipeline
  auto begun = backend.store().begin(first, "shop/h", "t1");
  ASSERT_TRUE(begun.ok()) << begun.error().message;
  EXPECT_EQ(*begun, BeginVerdict::kRunning);

  ASSERT_TRUE(backend.killClients());  // the group's connection (and the store's) closed
  auto completed = backend.store().complete(first, "shop/h", "t1", success(), nullptr);
  ASSERT_TRUE(completed.ok()) << completed.error().message;
  EXPECT_EQ(completed->kind, CompleteVerdict::Kind::kSucceeded);
  EXPECT_TRUE(completed->acked);
  EXPECT_FALSE(backend.pending(first));

  // And the group serves the next call itself again.
  const std::string second = backend.deliver();
  const std::uint64_t before = backend.groupCalls();
  auto started = backend.store().start(second, startRequest(plan, {true}, "t2"));
  ASSERT_TRUE(started.ok()) << started.error().message;
  EXPECT_EQ(started->kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(backend.groupCalls(), before + 1);
}

// The *start* calls of many stores (a worker's pool threads) made while the group's pipeline is
// in flight go in one pipeline; each store gets its own verdict and claim, and each invocation
// then begins and completes through the same group.
TEST(RedisLifecycleStoreGroup, StartsOfManyStoresInOnePipelineEachGetTheirOwnClaim) {
  auto server = relay::testing::RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto redis = (*server)->connect();
  ASSERT_TRUE(redis->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  constexpr int kStores = 8;
  std::vector<std::string> ids;
  for (int i = 0; i < kStores; ++i) {
    ids.emplace_back(*redis->command({"XADD", "events", "*", "event", "{}"})->string());
  }
  ASSERT_TRUE(
      redis->command({"XREADGROUP", "GROUP", "relay", "w1", "STREAMS", "events", ">"}).ok());
  SystemClock clock;
  RedisStoreSettings settings;
  settings.keys = StreamKeys{"events", "relay"};
  settings.consumer = "w1";
  redis::ConnectionSettings patient;  // above the BLPOP below: it holds a pipeline
  patient.command_timeout = std::chrono::seconds(60);
  settings.group = std::make_shared<redis::GroupCommit>((*server)->endpoint(), patient, clock);
  std::vector<std::unique_ptr<RedisLifecycleStore>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(std::make_unique<RedisLifecycleStore>(settings, (*server)->endpoint(), clock));
  }
  redis::GroupCommit& group = *settings.group;
  std::thread holder([&] { (void)group.call({"BLPOP", "gate", "30"}); });
  ASSERT_TRUE(relay::testing::SpawnedProcess::waitUntil(
      [&] {
        auto clients = redis->command({"CLIENT", "LIST"});
        return clients.ok() &&
               std::string(*clients->string()).find("cmd=blpop") != std::string::npos;
      },
      std::chrono::seconds(10)));

  const Plan plan{{planned("shop", "h")}};
  std::vector<Result<StartVerdict>> starts(kStores, Error::internal("not called"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kStores; ++i) {
    threads.emplace_back([&, i] {
      starts[i] = stores[i]->start(ids[i], startRequest(plan, {true}, "t" + std::to_string(i)));
    });
  }
  ASSERT_TRUE(relay::testing::SpawnedProcess::waitUntil([&] { return group.waiting() == kStores; },
                                                        std::chrono::seconds(10)));
  ASSERT_TRUE(redis->command({"LPUSH", "gate", "open"}).ok());
  holder.join();
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(group.counts().pipelines, 2u);  // the BLPOP's, then every start in one
  EXPECT_EQ(group.counts().calls, kStores + 1u);

  threads.clear();
  std::vector<Result<CompleteVerdict>> completes(kStores, Error::internal("not called"));
  for (int i = 0; i < kStores; ++i) {
    ASSERT_TRUE(starts[i].ok()) << starts[i].error().message;
    EXPECT_EQ(starts[i]->kind, StartVerdict::Kind::kRun) << i;
    EXPECT_EQ(starts[i]->attempt, 1) << i;
    const auto state = redis->command({"HGET", settings.keys.state(ids[i]), "shop/h"});
    const std::optional<Marker> marker = Marker::parse(std::string(*state->string()));
    ASSERT_TRUE(marker) << i;
    EXPECT_EQ(marker->token, "t" + std::to_string(i));
    threads.emplace_back([&, i] {
      const std::string token = "t" + std::to_string(i);
      if (stores[i]->begin(ids[i], "shop/h", token).ok()) {
        completes[i] = stores[i]->complete(ids[i], "shop/h", token, success(), nullptr);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kStores; ++i) {
    ASSERT_TRUE(completes[i].ok()) << i << ": " << completes[i].error().message;
    EXPECT_EQ(completes[i]->kind, CompleteVerdict::Kind::kSucceeded) << i;
    EXPECT_TRUE(completes[i]->acked) << i;
  }
  EXPECT_EQ(*redis->command({"XPENDING", "events", "relay"})->at(0)->integer(), 0);
  EXPECT_EQ(group.counts().calls, 3u * kStores + 1u);  // every call went through the group
}

}  // namespace
}  // namespace relay::invocation::contract
