// redis+sentinel:// against one master, one replica and three redis-sentinel processes: one
// connection, then two workers and a producer through a kill -9 of the master.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "integration/ha/chaos_run.h"
#include "redis/connection.h"
#include "redis/topology.h"
#include "support/open_sockets.h"
#include "support/redis_topologies.h"

namespace relay::testing {
namespace {

TEST(SentinelConnection, FindsTheMasterThenTheNewOneAfterAKill9) {
  auto group = SentinelGroup::create();
  ASSERT_TRUE(group.ok()) << group.error().message;
  auto endpoint = redis::parseRedisUri((*group)->uri());
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  auto master = (*group)->master();
  ASSERT_TRUE(master.ok()) << master.error().message;
  const int old_port = (*master)->port();

  auto connection = redis::Connection::create(*endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  EXPECT_EQ((*connection)->server(), (*master)->uri());
  ASSERT_TRUE((*connection)->command({"SET", "k", "before"}).ok());
  ASSERT_TRUE((*connection)->command({"WAIT", "1", "2000"}).ok());
  EXPECT_EQ(socketsWithoutCloexec(), std::vector<int>{});

  (*master)->kill9();
  EXPECT_FALSE((*connection)->command({"GET", "k"}).ok());
  EXPECT_FALSE((*connection)->ok());
  auto promoted = (*group)->waitForFailover(old_port, std::chrono::seconds(30));
  ASSERT_TRUE(promoted.ok()) << promoted.error().message;

  auto again = redis::Connection::create(*endpoint);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ((*again)->server(), (*promoted)->uri());
  EXPECT_EQ(*(*again)->command({"GET", "k"})->string(), "before");
  EXPECT_EQ(endpoint->topology->counts().failovers, 1);
  EXPECT_EQ(endpoint->topology->counts().reconnects, 1);
}

// The chaos test: events flow, the master dies; both workers follow the promoted
// replica, every acknowledged event runs at least once and nothing stays pending.
TEST(SentinelChaos, Kill9OfTheMasterWhileEventsFlowLosesNothingAndLeavesNothingPending) {
  auto group = SentinelGroup::create();
  ASSERT_TRUE(group.ok()) << group.error().message;
  auto endpoint = redis::parseRedisUri((*group)->uri());
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  constexpr int kEvents = 100;
  ChaosRun run({(*group)->uri(), (*group)->uri()}, *endpoint, kEvents);
  std::string why;
  ASSERT_TRUE(run.start(why)) << why;
  ASSERT_TRUE(run.waitForAcknowledged(kEvents / 3)) << run.logs();

  auto master = (*group)->master();
  ASSERT_TRUE(master.ok()) << master.error().message;
  const int old_port = (*master)->port();
  run.disrupting();
  const auto killed_at = std::chrono::steady_clock::now();
  (*master)->kill9();
  const auto followed = run.timeToNewMaster(killed_at, std::chrono::seconds(30));
  auto promoted = (*group)->waitForFailover(old_port, std::chrono::seconds(30));
  ASSERT_TRUE(promoted.ok()) << promoted.error().message;

  const bool settled = run.settle(std::chrono::seconds(90));
  const std::string report = run.report("sentinel kill -9", followed);
  std::cout << report << "\n";
  ASSERT_TRUE(settled) << report << "\n" << run.logs();
  EXPECT_EQ(run.lost(), std::vector<int>{});
  EXPECT_EQ(run.pending(), 0);
  EXPECT_TRUE(std::all_of(followed.begin(), followed.end(), [](auto time) {
    return time.count() >= 0;
  })) << "a worker never reached the new master";
}

// Issue 28, "Measured": ten times the events, a schedule firing every minute, and a Sentinel
// failover (kill -9 of the master) in the middle. Nothing acknowledged is lost, no attempt is
// charged that did not start, nothing is acknowledged before its plan is terminal; the
// at-least-once duplicates are printed.
TEST(SentinelChaos, TenTimesTheEventsAndSchedulesAcrossAFailoverKeepEveryGuarantee) {
  auto group = SentinelGroup::create();
  ASSERT_TRUE(group.ok()) << group.error().message;
  auto endpoint = redis::parseRedisUri((*group)->uri());
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  constexpr int kEvents = 1'000;
  ChaosRun run({(*group)->uri(), (*group)->uri()}, *endpoint, kEvents, /*with_schedule=*/true);
  std::string why;
  ASSERT_TRUE(run.start(why)) << why;
  ASSERT_TRUE(run.waitForAcknowledged(kEvents / 2)) << run.logs();
  auto master = (*group)->master();
  ASSERT_TRUE(master.ok()) << master.error().message;
  const int old_port = (*master)->port();
  run.disrupting();
  const auto killed_at = std::chrono::steady_clock::now();
  (*master)->kill9();
  const auto followed = run.timeToNewMaster(killed_at, std::chrono::seconds(30));
  auto promoted = (*group)->waitForFailover(old_port, std::chrono::seconds(30));
  ASSERT_TRUE(promoted.ok()) << promoted.error().message;
  const bool settled = run.settle(std::chrono::seconds(180));
  const ChaosRun::Audit audit = run.audit();
  const std::string report =
      run.report("sentinel kill -9, 1,000 events and a schedule", followed, audit);
  std::cout << report << "\n";
  ASSERT_TRUE(settled) << report << "\n" << run.logs();
  EXPECT_EQ(run.lost(), std::vector<int>{});
  EXPECT_EQ(run.pending(), 0);
  EXPECT_EQ(audit.never_run_charged, 0) << report;
  EXPECT_EQ(audit.early_acks, 0) << report;
  EXPECT_GT(audit.messages, kEvents);  // the events and at least one occurrence
}

}  // namespace
}  // namespace relay::testing
