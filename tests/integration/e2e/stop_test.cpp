// Stopping `relay start` (issue 13 item 10), end to end on the process runtime: the first
// SIGTERM lets the running handler finish; a second one stops at once, kills the handler with
// the worker and releases its claim without charging the attempt.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "common/system_clock.h"
#include "fakes/temp_dir.h"
#include "invocation/marker.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

class Stop : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    ::chmod(apps_.path().c_str(), 0755);
    apps_.write("slow/template.yaml",
                "runtime: exec\nenv:\n  PID_FILE: " + (apps_.path() / "pid").string() +
                    "\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
                    "    timeout: 60s\n    retries: 0\n");
    // Writes its pid, then runs until killed (or 30 s).
    apps_.write("slow/bin/h.sh",
                "#!/bin/sh\necho $$ > \"$PID_FILE\"\necho \"attempt $RELAY_ATTEMPT started\"\n"
                "exec sleep 30\n",
                0755);
    ::chmod((apps_.path() / "slow").c_str(), 0755);
    ::chmod((apps_.path() / "slow/bin").c_str(), 0755);
    redis_ = server().connect();
  }
  std::unique_ptr<SpawnedProcess> relay() {
    return std::make_unique<SpawnedProcess>(
        std::vector<std::string>{RELAY_BINARY, "start", "--apps", apps_.path().string(),
                                 "--runtime", "process"},
        std::vector<std::string>{"REDIS_URI=" + server().uri(), "RELAY_CONSUMER=stopper",
                                 "RELAY_HTTP_ADDR=127.0.0.1:0"},
        (apps_.path() / "relay.log").string());
  }
  std::string marker(const std::string& id) {
    auto reply = redis_->command({"HGET", "relay:events:inv:relay:" + id, "slow/bin/h.sh"});
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::string(**text) : "<nil>";
  }
  pid_t handlerPid() {
    std::ifstream in(apps_.path() / "pid");
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  TempDir apps_;
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(Stop, ASecondSignalStopsAtOnceAndTheKilledAttemptIsNotCharged) {
  auto worker = relay();
  ASSERT_TRUE(worker->waitForLog("relay started")) << worker->log();
  const std::string id(
      *redis_->command({"XADD", "events", "*", "event", R"({"kind":"job"})"})->string());
  ASSERT_TRUE(worker->waitForLog("attempt 1 started")) << worker->log();
  const pid_t handler = handlerPid();
  ASSERT_GT(handler, 0);
  worker->signal(SIGTERM);
  ASSERT_TRUE(worker->waitForLog("again to stop at once")) << worker->log();
  worker->signal(SIGTERM);
  const int status = worker->wait();  // at once: not the handler's 30 s
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_NE(worker->log().find("claims released"), std::string::npos) << worker->log();
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return ::kill(handler, 0) != 0; }, seconds(10)))
      << "the handler died with the worker";
  const auto released = invocation::Marker::parse(marker(id));
  ASSERT_TRUE(released) << marker(id);
  EXPECT_EQ(released->state, invocation::Marker::State::kFailed);
  EXPECT_EQ(released->attempt, 0);  // retries: 0, and yet nothing was charged
  auto dlq = redis_->command({"XLEN", "relay:events:dlq"});
  EXPECT_EQ(*dlq->integer(), 0);
  auto pending = redis_->command({"XPENDING", "events", "relay"});
  EXPECT_EQ(*pending->at(0)->integer(), 1);  // still owed, for a replica or the next start
}

TEST_F(Stop, AnIdleWorkerStopsBeforeAnyOfItsIntervalsEnds) {
  auto worker = relay();
  ASSERT_TRUE(worker->waitForLog("relay started")) << worker->log();
  worker->signal(SIGTERM);
  // Below the renewer's 10 s and the apps watcher's 30 s availability refresh: a loop that only
  // noticed the stop when its interval ended would hold the exit past this bound.
  const int status = worker->wait(seconds(8));
  ASSERT_NE(status, -1) << "still running 8 s after SIGTERM\n" << worker->log();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(Stop, TheFirstSignalLetsTheRunningHandlerFinish) {
  apps_.write("slow/bin/h.sh",
              "#!/bin/sh\necho \"attempt $RELAY_ATTEMPT started\"\nsleep 1\necho done\n", 0755);
  auto worker = relay();
  ASSERT_TRUE(worker->waitForLog("relay started")) << worker->log();
  const std::string id(
      *redis_->command({"XADD", "events", "*", "event", R"({"kind":"job"})"})->string());
  ASSERT_TRUE(worker->waitForLog("attempt 1 started")) << worker->log();
  worker->signal(SIGTERM);
  const int status = worker->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(marker(id).substr(0, 12), "succeeded:1:");
  EXPECT_NE(worker->log().find("[slow/bin/h.sh] done"), std::string::npos);
}

}  // namespace
}  // namespace relay::testing
