// Deadlines end to end (docs/apps.md "Deadlines"): real worker processes on one redis-server,
// the deadline counted from the event's publication (Redis's clock), checked before every
// attempt on whichever worker takes the invocation, through a kill -9.
#include <signal.h>

#include <fstream>
#include <string>

#include "integration/faults/fault_fixture.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

class Deadlines : public FaultTest {
 protected:
  long long runs(const std::string& root, const std::string& app) {
    std::ifstream in(appsRoot(root).path() / app / "runs");
    long long lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
};

// A handler that always fails, 10 retries 700 ms apart, a 2 s deadline, two workers: it runs
// while the deadline allows (about three times), then is dead-lettered with reason `deadline
// 2s` instead of being retried on, and its message is acknowledged.
TEST_F(Deadlines, AnInvocationPastItsDeadlineIsDeadLetteredInsteadOfRetried) {
  writeApp("v1", "alerts",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [alert]}\n"
           "    retries: 10\n    deadline: 2s\n",
           {{"bin/h.sh", "#!/bin/sh\ncat >/dev/null\necho run >> runs\nexit 1\n"}});
  auto one = worker("v1", "one", {"RELAY_TEST_BACKOFF=700ms"});
  auto two = worker("v1", "two", {"RELAY_TEST_BACKOFF=700ms"});
  xadd(R"({"kind":"alert"})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << one->log() << two->log();
  const long long ran = runs("v1", "alerts");
  EXPECT_GE(ran, 2) << one->log();
  EXPECT_LE(ran, 4) << one->log();  // 11 attempts were allowed; the deadline stopped them
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("reason").rfind("deadline 2s (last attempt: exit 1", 0), 0u)
      << entries[0].at("reason");
  EXPECT_EQ(entries[0].at("handler_attempts"), std::to_string(ran));
}

// An event that waited in the stream longer than its rule's start_timeout before any worker
// could take it (no worker ran) never runs: it is dead-lettered with reason `start_timeout 1s`.
// Another rule of the same event, without one, runs.
TEST_F(Deadlines, AnEventQueuedLongerThanItsStartTimeoutNeverRuns) {
  writeApp("v1", "codes",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [code]}\n"
           "    start_timeout: 1s\n  - handler: bin/audit.sh\n    pattern: {kind: [code]}\n",
           {{"bin/h.sh", "#!/bin/sh\ncat >/dev/null\necho run >> runs\n"},
            {"bin/audit.sh", "#!/bin/sh\ncat >/dev/null\necho audit >> audits\n"}});
  xadd(R"({"kind":"code"})");
  std::this_thread::sleep_for(seconds(2));  // the backlog: no worker is running
  auto late = worker("v1", "late");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << late->log();
  EXPECT_EQ(runs("v1", "codes"), 0);
  EXPECT_TRUE(std::filesystem::exists(appsRoot("v1").path() / "codes/audits"));
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("reason"), "start_timeout 1s");
  EXPECT_EQ(entries[0].at("handler"), "bin/h.sh");
  EXPECT_EQ(entries[0].at("handler_attempts"), "0");
}

// kill -9 during the first attempt: the worker that takes the claim over finds the deadline
// passed and dead-letters the invocation (reason naming the lost attempt) instead of running it
// again; it ran once.
TEST_F(Deadlines, AKillDuringAnAttemptThenTheDeadlineEndsItOnTheNextWorker) {
  writeApp("v1", "jobs",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
           "    timeout: 2s\n    retries: 5\n    deadline: 1s\n",
           {{"bin/h.sh", "#!/bin/sh\ncat >/dev/null\necho run >> runs\necho started\nsleep 30\n"}});
  auto first = worker("v1", "first");
  xadd(R"({"kind":"job"})");
  ASSERT_TRUE(first->waitForLog("] started")) << first->log();
  first->signal(SIGKILL);
  first->wait();
  auto second = worker("v1", "second", {"RELAY_TEST_BACKOFF=100ms"});
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(40))) << second->log();
  EXPECT_EQ(runs("v1", "jobs"), 1);
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 1u) << second->log();
  EXPECT_EQ(entries[0].at("reason"), "deadline 1s (last attempt: worker lost during attempt 1)");
}

}  // namespace
}  // namespace relay::testing
