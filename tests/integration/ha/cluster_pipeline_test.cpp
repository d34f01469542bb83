// The pipeline on a real Redis Cluster (three masters with one replica each, made by
// `redis-cli --cluster create`) and the stream {events}: events, a retry, the DLQ, a schedule
// and the `relay dlq` commands while the stream's slot migrates to another master (ASK, then
// MOVED); a CLUSTER FAILOVER while events flow; and a stream without a hash tag refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "integration/ha/chaos_run.h"
#include "integration/ops/relay_binary.h"
#include "redis/cluster.h"
#include "redis/connection.h"
#include "support/redis_topologies.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

const std::string kPipelineStream = "{events}";

// The master of kPipelineStream's slot as any node leads to it, as Relay's configuration makes it.
redis::Endpoint streamEndpoint(const RedisServer& node) {
  auto endpoint = redis::parseRedisUri(node.uri());
  if (!endpoint) throw std::runtime_error(endpoint.error().message);
  endpoint->slot_key = kPipelineStream;
  return std::move(endpoint).value();
}

class RelayCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = RedisCluster::create();
    ASSERT_TRUE(cluster.ok()) << cluster.error().message;
    cluster_ = std::move(cluster).value();
    auto owner = cluster_->masterOf(slot_);
    auto other = cluster_->otherMaster(slot_);
    ASSERT_TRUE(owner.ok() && other.ok());
    owner_ = *owner;
    other_ = *other;
  }

  std::unique_ptr<RedisCluster> cluster_;
  const int slot_ = redis::keySlot(kPipelineStream);
  RedisServer* owner_ = nullptr;  // the master of the slot at the start
  RedisServer* other_ = nullptr;  // another master
};

TEST_F(RelayCluster, WholePipelineRunsOnAHashTaggedStreamWhileItsSlotMigrates) {
  HaApps apps(/*with_schedule=*/true);
  TempDir logs;
  // Started through a node that does not serve the stream; retries after 200 ms.
  HaWorker worker(other_->uri(), apps, "worker", logs.path(), {"RELAY_TEST_BACKOFF=200ms"});
  ASSERT_TRUE(worker.started()) << worker.log();
  auto producer = redis::Connection::create(streamEndpoint(*owner_));
  ASSERT_TRUE(producer.ok()) << producer.error().message;
  const auto publish = [&](const std::string& event) {
    auto added = (*producer)->command({"XADD", kPipelineStream, "*", "event", event});
    ASSERT_TRUE(added.ok()) << added.error().message;
  };
  const auto count = [&](const std::vector<std::string>& command) -> long long {
    auto reply = (*producer)->command(command);
    if (!reply) return -1;
    auto value = reply->isArray() ? reply->at(0) : redis::Result<redis::ReplyView>(reply->view());
    if (!value || !value->integer()) return -1;
    return *value->integer();
  };
  const auto pending = [&] { return count({"XPENDING", kPipelineStream, "relay"}); };
  const auto dlq = [&] { return count({"XLEN", "relay:" + kPipelineStream + ":dlq"}); };
  const auto ran = [&](int first, int last) {
    const auto runs = apps.runsByEventNumber();
    for (int n = first; n <= last; ++n) {
      if (!runs.count(n)) return false;
    }
    return true;
  };
  const auto scheduleRan = [&] {
    for (const std::string& line : apps.lines()) {
      if (line.find("relay.schedule") != std::string::npos) return true;
    }
    return false;
  };

  // An event, one failing into the DLQ, one failing once then retried, a malformed one, and an
  // unmatched one; the schedule's catch-up occurrence runs too.
  for (const char* event :
       {R"({"kind":"ha","n":1})", R"({"kind":"ha","n":2,"fail":true})",
        R"({"kind":"ha","n":3,"flaky":true})", "not json", R"({"kind":"other"})"}) {
    publish(event);
  }
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        return ran(1, 3) && apps.flakyAttempts().size() == 2 && dlq() == 2 && scheduleRan() &&
               pending() == 0;
      },
      seconds(60)))
      << worker.log() << "pending " << pending() << " dlq " << dlq();

  // The slot migrates to `other_`: first the owner sends ASK for the keys it gave away...
  ASSERT_TRUE(cluster_->beginMigration(slot_, *other_).ok());
  ASSERT_TRUE(cluster_->moveKeys(slot_, *other_).ok());
  publish(R"({"kind":"ha","n":4})");
  publish(R"({"kind":"ha","n":5,"fail":true})");
  const bool during_migration = SpawnedProcess::waitUntil([&] { return ran(4, 5); }, seconds(5));
  std::cout << "events run while the slot migrated (ASK): " << (during_migration ? 2 : 0)
            << " of 2\n";
  // ... then the slot is `other_`'s and the owner answers MOVED.
  ASSERT_TRUE(cluster_->finishMigration(slot_, *other_).ok());
  publish(R"({"kind":"ha","n":6})");
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return ran(4, 6) && dlq() == 3 && pending() == 0; },
                                        seconds(60)))
      << worker.log() << "pending " << pending() << " dlq " << dlq();
  EXPECT_EQ((*producer)->server(), other_->uri());
  EXPECT_GE(worker.metric("relay_redis_failovers_total"), 1) << "the worker followed no MOVED";
  EXPECT_EQ(apps.flakyAttempts(), (std::vector<std::string>{"flaky attempt 1", "flaky attempt 2"}));

  // The CLI, through a replica that serves nothing: ls, inspect, replay (fail.sh succeeds when
  // replayed), rm.
  auto replica = cluster_->replicaOf(slot_);
  ASSERT_TRUE(replica.ok()) << replica.error().message;
  const std::vector<std::string> cli_env = apps.env((*replica)->uri());
  const BinaryRun listed = runRelay({"dlq", "ls", "--json"}, cli_env);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const auto entries = nlohmann::json::parse(listed.out);
  ASSERT_EQ(entries.size(), 3U) << listed.out;
  std::string handler_entry, malformed_entry;
  for (const auto& entry : entries) {
    if (entry["kind"] == "handler" && handler_entry.empty()) handler_entry = entry["id"];
    if (entry["kind"] == "malformed") malformed_entry = entry["id"];
  }
  ASSERT_FALSE(handler_entry.empty() || malformed_entry.empty()) << listed.out;
  const BinaryRun inspected = runRelay({"dlq", "inspect", handler_entry}, cli_env);
  EXPECT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_NE(inspected.out.find("bin/fail.sh"), std::string::npos) << inspected.out;
  const BinaryRun replayed = runRelay({"dlq", "replay", handler_entry}, cli_env);
  EXPECT_EQ(replayed.exit_code, 0) << replayed.out << replayed.err;
  const BinaryRun removed = runRelay({"dlq", "rm", malformed_entry}, cli_env);
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(dlq(), 1);
}

TEST_F(RelayCluster, ClusterFailoverWhileEventsFlowLosesNothingAndLeavesNothingPending) {
  constexpr int kEvents = 100;
  // The workers start through different nodes, neither of them necessarily the slot's master.
  ChaosRun run({owner_->uri(), other_->uri()}, streamEndpoint(*other_), kEvents);
  std::string why;
  ASSERT_TRUE(run.start(why)) << why;
  ASSERT_TRUE(run.waitForAcknowledged(kEvents / 3)) << run.logs();

  run.disrupting();
  const auto started_at = std::chrono::steady_clock::now();
  auto promoted = cluster_->failover(slot_, seconds(30));
  ASSERT_TRUE(promoted.ok()) << promoted.error().message;
  const auto followed = run.timeToNewMaster(started_at, seconds(30));

  const bool settled = run.settle(seconds(90));
  const std::string report = run.report("CLUSTER FAILOVER", followed);
  std::cout << report << "\n";
  ASSERT_TRUE(settled) << report << "\n" << run.logs();
  EXPECT_EQ(run.lost(), std::vector<int>{});
  EXPECT_EQ(run.atRisk(), std::vector<int>{});  // a manual failover waits for the replica
  EXPECT_EQ(run.pending(), 0);
  EXPECT_TRUE(std::all_of(followed.begin(), followed.end(), [](auto time) {
    return time.count() >= 0;
  })) << "a worker never reached the new master";
}

TEST_F(RelayCluster, StreamWithoutAHashTagIsRefusedInOneLineAndNothingIsWritten) {
  HaApps apps;
  std::vector<std::string> env = apps.env(owner_->uri());
  std::replace(env.begin(), env.end(), std::string("REDIS_STREAM={events}"),
               std::string("REDIS_STREAM=events"));
  const BinaryRun started = runRelay({"start"}, env, seconds(30));
  EXPECT_EQ(started.exit_code, 1) << started.err;
  EXPECT_NE(started.err.find("is a Redis Cluster, and the keys named after 'events' would spread "
                             "over several hash slots: use a hash-tagged name such as '{events}'"),
            std::string::npos)
      << started.err;
  EXPECT_EQ(started.err.find('\n'), started.err.size() - 1) << started.err;
  const BinaryRun listed = runRelay({"dlq", "ls"}, env);
  EXPECT_EQ(listed.exit_code, 1) << listed.err;
  EXPECT_NE(listed.err.find("hash-tagged"), std::string::npos) << listed.err;
  for (auto& node : cluster_->nodes()) {
    auto redis = redis::Connection::create(node->unixEndpoint());
    ASSERT_TRUE(redis.ok()) << redis.error().message;
    EXPECT_EQ(*(*redis)->command({"DBSIZE"})->integer(), 0) << node->uri();
  }
}

}  // namespace
}  // namespace relay::testing
