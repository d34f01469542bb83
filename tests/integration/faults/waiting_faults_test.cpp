// The windows where work waits (docs/pipeline.md "Guarantees", "Waiting"), each with a real
// fault: kill -9 of a worker while claims wait for a slot, a replica on other rules taking over
// a message another worker holds in its queue, Redis away for longer than a claim while a
// handler ends, and a paused app's backlog under the reclaimer.
#include <signal.h>

#include <thread>

#include "integration/faults/fault_fixture.h"
#include "invocation/paused_apps.h"

namespace relay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Prints "started <id>", then sleeps while the app's `slow` file exists (the test removes it).
constexpr const char* kSlowHandler =
    "#!/bin/sh\necho \"started $RELAY_MESSAGE_ID attempt $RELAY_ATTEMPT\"\n"
    "while [ -e slow ]; do sleep 0.1; done\necho \"done $RELAY_MESSAGE_ID\"\n";

class WaitingFaults : public FaultTest {};

// Issue 28, scenario 1: one slot, three messages, kill -9 while one handler runs and two wait
// for the slot. Only the started attempt is charged: the two others run on the next worker.
TEST_F(WaitingFaults, AKillDuringTheSlotWaitChargesOnlyTheHandlerThatStarted) {
  writeApp("v1", "slow",
           "runtime: exec\nconcurrency: 1\nevents:\n  - handler: bin/h.sh\n"
           "    pattern: {kind: [job]}\n    timeout: 3s\n    retries: 0\n",
           {{"bin/h.sh", kSlowHandler}});
  appsRoot("v1").write("slow/slow", "");
  auto first = worker("v1", "first");
  const std::vector<std::string> ids = {xadd(R"({"kind":"job"})"), xadd(R"({"kind":"job"})"),
                                        xadd(R"({"kind":"job"})")};
  ASSERT_TRUE(first->waitForLog("started ")) << first->log();
  std::this_thread::sleep_for(milliseconds(500));  // the others wait for the app's slot
  int claimed = 0;
  for (const std::string& id : ids) claimed += field(id, "slow/bin/h.sh") != "<nil>";
  EXPECT_EQ(claimed, 1);  // a slot before a claim: the waiting ones hold nothing in Redis
  first->signal(SIGKILL);
  first->wait();
  std::filesystem::remove(appsRoot("v1").path() / "slow/slow");
  auto second = worker("v1", "second");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(40))) << second->log();
  EXPECT_EQ(count(first->log(), "] started "), 1);
  EXPECT_EQ(count(second->log(), "] started "), 2);  // the two that never ran, once each
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 1u);  // only the started one, whose worker died during it
  EXPECT_EQ(entries[0].at("reason"), "worker lost during attempt 1");
  EXPECT_EQ(entries[0].at("handler_attempts"), "1");
}

// Issue 28, scenario 2: worker A's one thread is busy, a second message waits in its queue; a
// replica on another rule version takes it over and acknowledges it as unmatched. A then never
// runs it, and leaves no state behind.
TEST_F(WaitingFaults, AReplicasAcknowledgementIsFinalForAMessageAnotherWorkerHeld) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
           "    timeout: 10s\n",
           {{"bin/h.sh", kSlowHandler}});
  writeApp("v2", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [other]}\n",
           {{"bin/h.sh", kSlowHandler}});
  appsRoot("v1").write("shop/slow", "");
  auto a = worker("v1", "a", {"MAX_CONCURRENCY=1"});
  const std::string first = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(a->waitForLog("started " + first)) << a->log();
  const std::string second = xadd(R"({"kind":"job"})");  // waits in A's queue
  auto b = worker("v2", "b");
  ASSERT_TRUE(b->waitForLog("unmatched by these rules")) << b->log();
  std::filesystem::remove(appsRoot("v1").path() / "shop/slow");
  ASSERT_TRUE(a->waitForLog("acknowledged elsewhere")) << a->log();
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; })) << a->log();
  EXPECT_EQ(a->log().find("started " + second), std::string::npos);  // never run
  EXPECT_EQ(field(second, "relay:plan"), "<nil>");                   // no state left without a TTL
  EXPECT_EQ(ttlOf(keys_.state(second)), -2);
  EXPECT_TRUE(dlq().empty());
}

// Issue 28, scenario 3: the handler succeeds while Redis is paused for longer than its claim.
// Its worker records the real outcome when Redis answers again; the idle replica takes nothing
// over meanwhile (docs/pipeline.md "Outages").
TEST_F(WaitingFaults, AnOutcomeOutlivesARedisPauseLongerThanItsClaim) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
           "    timeout: 2s\n    retries: 1\n",
           {{"bin/h.sh", "#!/bin/sh\necho \"started $RELAY_MESSAGE_ID\"\nsleep 1\nexit 0\n"}});
  auto a = worker("v1", "a");
  auto b = worker("v1", "b");
  const std::string id = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(a->waitForLog("started " + id) || b->waitForLog("started " + id));
  // The claim holds 2 s + 2 s of kill grace; Redis answers nobody for 7 s.
  ASSERT_TRUE(redis_->command({"CLIENT", "PAUSE", "7000", "ALL"}).ok());
  std::this_thread::sleep_for(milliseconds(7'500));
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; })) << a->log() << b->log();
  EXPECT_EQ(count(a->log() + b->log(), "] started "), 1);  // never run again
  EXPECT_EQ(field(id, "shop/bin/h.sh").substr(0, 12), "succeeded:1:");
  EXPECT_TRUE(dlq().empty());
}

// Issue 28, scenario 3 with Redis stopped and started again from its RDB.
TEST_F(WaitingFaults, AnOutcomeOutlivesARedisRestartLongerThanItsClaim) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
           "    timeout: 2s\n    retries: 0\n",
           {{"bin/h.sh", "#!/bin/sh\necho \"started $RELAY_MESSAGE_ID\"\nsleep 1\nexit 0\n"}});
  auto a = worker("v1", "a");
  auto b = worker("v1", "b");
  const std::string id = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] {
    return a->log().find("started " + id) != std::string::npos ||
           b->log().find("started " + id) != std::string::npos;
  }));
  ASSERT_TRUE(redis_->command({"SAVE"}).ok());
  ASSERT_TRUE(server_->stop().ok());
  std::this_thread::sleep_for(milliseconds(7'000));
  ASSERT_TRUE(server_->start().ok());
  redis_ = server_->connect();
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; })) << a->log() << b->log();
  EXPECT_EQ(count(a->log() + b->log(), "] started "), 1);
  EXPECT_EQ(field(id, "shop/bin/h.sh").substr(0, 12), "succeeded:1:");
  EXPECT_TRUE(dlq().empty());  // retries: 0, and still no dead letter for a success
}

// Issue 28, scenario 5: a paused app's backlog is parked once and then costs no sweep anything;
// the resume runs it.
TEST_F(WaitingFaults, APausedBacklogCostsNothingPerSweepAndRunsOnResume) {
  writeApp("v1", "shop",
           "runtime: exec\nconcurrency: 16\nevents:\n  - handler: bin/h.sh\n"
           "    pattern: {kind: [job]}\n",
           {{"bin/h.sh", "#!/bin/sh\nexit 0\n"}});
  ASSERT_TRUE(invocation::pauseApp(*redis_, keys_, "shop").ok());
  auto a = worker("v1", "a");
  constexpr int kBacklog = 1'000;
  for (int i = 0; i < kBacklog; ++i) xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] {
    return pendingByConsumer()[std::string(invocation::kParkingConsumer)] == kBacklog;
  })) << a->log();
  const std::string log_before = a->log();
  const long long evals = calls("evalsha") + calls("eval");
  const long long claims = calls("xclaim") + calls("xautoclaim");
  std::this_thread::sleep_for(seconds(3));  // fifteen reclaim sweeps of this worker
  // Heartbeats and due polls only: nothing per parked message.
  EXPECT_LT(calls("evalsha") + calls("eval") - evals, 100);
  EXPECT_EQ(calls("xclaim") + calls("xautoclaim") - claims, 0);
  EXPECT_EQ(a->log().size(), log_before.size());  // not a line per message, not a line at all
  ASSERT_TRUE(invocation::resumeApp(*redis_, keys_, "shop").ok());
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(60))) << a->log();
  EXPECT_EQ(*redis_->command({"HGET", keys_.stats(), "shop/bin/h.sh:succeeded"})->string(),
            std::to_string(kBacklog));
}

// Issue 29, "a message that kills workers": every worker that takes this message dies before it
// reaches a handler. After three deaths it is dead-lettered as poison (with its first bytes and
// its size, never pulled whole) instead of crash-looping the group; the other events run.
TEST_F(WaitingFaults, AMessageThatKillsItsWorkersIsDeadLetteredAfterThreeDeaths) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n",
           {{"bin/h.sh", "#!/bin/sh\necho \"started $RELAY_MESSAGE_ID\"\n"}});
  const std::string poison = xadd(R"({"kind":"job","poison":true})");
  std::vector<std::unique_ptr<SpawnedProcess>> dead;
  for (int i = 1; i <= 3; ++i) {
    // Each worker takes the message (the first reads it, the others reclaim it once the last
    // holder's heartbeat is gone) and dies of it.
    dead.push_back(worker("v1", "victim" + std::to_string(i), {"RELAY_TEST_CRASH_ON=poison"}));
    ASSERT_NE(dead.back()->wait(seconds(20)), -1) << dead.back()->log();
    std::this_thread::sleep_for(milliseconds(1'500));  // its heartbeat (1 s) expires
  }
  auto survivor = worker("v1", "survivor", {"RELAY_TEST_CRASH_ON=poison"});
  const std::string fine = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; })) << survivor->log();
  ASSERT_TRUE(survivor->waitForLog("started " + fine)) << survivor->log();
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("kind"), "poison");
  EXPECT_EQ(entries[0].at("original_id"), poison);
  EXPECT_EQ(entries[0].at("event"), R"({"kind":"job","poison":true})");
  EXPECT_NE(entries[0].at("reason").find("died 3 times"), std::string::npos);
  EXPECT_EQ(survivor->log().find("started " + poison), std::string::npos);
}

}  // namespace
}  // namespace relay::testing
