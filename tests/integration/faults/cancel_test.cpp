// Cancellation end to end (docs/pipeline.md "Cancellation"): `relay cancel` against real worker
// processes sharing one stream through a real redis-server. A running handler is stopped on
// whichever worker runs it (SIGTERM to its whole tree, SIGKILL after the grace), through the
// cancels stream; what has not started never starts; cancelled is terminal.
#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "integration/faults/fault_fixture.h"
#include "support/cli_run.h"

namespace relay::testing {
namespace {

using cli::testing::CliRun;
using cli::testing::ScopedEnv;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Records "start <pid> <child pid>" in `runs` (the child a `sleep` it waits for, so the tree
// has two processes), "term <pid>" when SIGTERM reaches the shell; ends on its own after 60 s.
constexpr const char* kStoppableHandler =
    "#!/bin/sh\ntrap 'echo \"term $$\" >> runs; exit 0' TERM\nsleep 60 &\n"
    "echo \"start $$ $!\" >> runs\nwait\n";
// The same, ignoring SIGTERM (its `sleep` too: an ignored signal stays ignored across exec):
// only the SIGKILL after the grace ends it.
constexpr const char* kStubbornHandler =
    "#!/bin/sh\ntrap '' TERM\nsleep 60 &\necho \"start $$ $!\" >> runs\nwait\nwait\n";
// Fails at once, recording its start: a retry would show as a second line.
constexpr const char* kFailingHandler = "#!/bin/sh\necho \"start $$ 0\" >> runs\nexit 1\n";

std::string jobsApp(const std::string& extra = "") {
  return "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
         "    retries: 3\n    timeout: 2m\n" +
         extra;
}

class Cancel : public FaultTest {
 protected:
  /// `relay cancel ARGS...` in this process, on this test's Redis.
  CliRun cancel(std::vector<std::string> args) {
    ScopedEnv uri("REDIS_URI", server_->uri());
    args.insert(args.begin(), "cancel");
    return cli::testing::run(args);
  }
  std::vector<std::string> runs(const std::string& app) {
    std::ifstream in(appsRoot("v1").path() / app / "runs");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  long long starts(const std::string& app) {
    long long n = 0;
    for (const std::string& line : runs(app)) n += line.rfind("start ", 0) == 0 ? 1 : 0;
    return n;
  }
  /// The pids of the first run's shell and its child.
  std::pair<pid_t, pid_t> firstRun(const std::string& app) {
    for (const std::string& line : runs(app)) {
      std::istringstream words(line);
      std::string kind;
      pid_t shell = 0, child = 0;
      if (words >> kind >> shell >> child && kind == "start") return {shell, child};
    }
    return {0, 0};
  }
  /// Whether process `pid` has ended (a zombie waiting for its reaper has).
  static bool gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_text, name, state;
    if (!(stat >> pid_text >> name >> state)) return true;
    return state == "Z" || state == "X";
  }
  long long stat(const std::string& field, const std::string& counter) {
    auto reply = redis_->command({"HGET", keys_.stats(), field + ":" + counter});
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::stoll(std::string(**text)) : 0;
  }
};

// A running handler on one of two workers is stopped by `relay cancel <invocation>` (SIGTERM
// reaches its shell, its child dies too), recorded cancelled once, never retried (the backoff
// is 100 ms), no DLQ entry; only the worker that ran it acted.
TEST_F(Cancel, ARunningHandlerIsStoppedOnItsWorkerAndNeverRetried) {
  writeApp("v1", "jobs", jobsApp(), {{"bin/h.sh", kStoppableHandler}});
  auto one = worker("v1", "one", {"RELAY_TEST_BACKOFF=100ms"});
  auto two = worker("v1", "two", {"RELAY_TEST_BACKOFF=100ms"});
  const std::string id = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] { return starts("jobs") == 1; })) << one->log() << two->log();
  const auto [shell, child] = firstRun("jobs");
  ASSERT_GT(child, 0);

  const CliRun result = cancel({id + "/jobs/bin/h.sh"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(id + "/jobs/bin/h.sh: running: stop sent to its worker"),
            std::string::npos)
      << result.out;
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(10))) << one->log() << two->log();
  EXPECT_TRUE(waitUntil([&] { return gone(child); }, seconds(5))) << "the handler's child lives";
  EXPECT_EQ(runs("jobs").size(), 2u);  // start, term
  EXPECT_EQ(runs("jobs").back(), "term " + std::to_string(shell));
  EXPECT_EQ(field(id, "jobs/bin/h.sh").rfind("cancelled:1:", 0), 0u) << field(id, "jobs/bin/h.sh");
  std::this_thread::sleep_for(milliseconds(600));  // six backoffs: a retry would have started
  EXPECT_EQ(starts("jobs"), 1);
  EXPECT_TRUE(dlq().empty());
  EXPECT_EQ(stat("jobs/bin/h.sh", "cancelled"), 1);
  EXPECT_EQ(stat("jobs/bin/h.sh", "failed"), 0);
  const std::string logs = one->log() + two->log();
  EXPECT_EQ(count(logs, "cancelling a running attempt"), 1) << logs;
  EXPECT_EQ(count(logs, "invocation cancelled: not retried"), 1) << logs;
}

// A handler that ignores SIGTERM (its child too) is killed after the grace, the whole tree; with
// --dead-letter it gets one DLQ entry, reason cancelled.
TEST_F(Cancel, AHandlerIgnoringSigtermIsKilledWithItsTreeAndDeadLetteredWhenAsked) {
  writeApp("v1", "jobs", jobsApp(), {{"bin/h.sh", kStubbornHandler}});
  auto one = worker("v1", "one", {"RELAY_TEST_BACKOFF=100ms"});
  auto two = worker("v1", "two", {"RELAY_TEST_BACKOFF=100ms"});
  const std::string id = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] { return starts("jobs") == 1; })) << one->log() << two->log();
  const auto [shell, child] = firstRun("jobs");
  ASSERT_GT(child, 0);

  const CliRun result = cancel({id, "--dead-letter", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 1u) << result.out;
  EXPECT_EQ(json[0]["invocation"], "jobs/bin/h.sh");
  EXPECT_EQ(json[0]["result"], "stopping");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(15))) << one->log() << two->log();
  EXPECT_TRUE(waitUntil([&] { return gone(shell) && gone(child); }, seconds(5)));
  EXPECT_EQ(runs("jobs").size(), 1u);  // no "term": the trap ignored it
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("reason").rfind("cancelled", 0), 0u) << entries[0].at("reason");
  EXPECT_EQ(entries[0].at("app"), "jobs");
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(starts("jobs"), 1);
  EXPECT_EQ(dlq().size(), 1u);
}

// An invocation due for a retry (its backoff is an hour) is cancelled before its next attempt:
// the message is acknowledged at once, nothing runs again, no DLQ entry.
TEST_F(Cancel, AnInvocationDueForARetryIsCancelledAndTheMessageAcknowledged) {
  writeApp("v1", "jobs", jobsApp(), {{"bin/h.sh", kFailingHandler}});
  auto one = worker("v1", "one", {"RELAY_TEST_BACKOFF=1h"});
  const std::string id = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] { return field(id, "jobs/bin/h.sh").rfind("failed:", 0) == 0; }))
      << one->log();
  const CliRun result = cancel({id});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("cancelled before it started"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(id + ": every invocation terminal: acknowledged"), std::string::npos)
      << result.out;
  EXPECT_EQ(pending(), 0);
  EXPECT_EQ(starts("jobs"), 1);
  EXPECT_TRUE(dlq().empty());
}

// A paused app's message waits parked; cancelled, it is acknowledged and never runs after the
// resume.
TEST_F(Cancel, APausedInvocationIsCancelledBeforeItStarts) {
  writeApp("v1", "jobs", jobsApp(), {{"bin/h.sh", kStoppableHandler}});
  auto one = worker("v1", "one");
  {
    ScopedEnv uri("REDIS_URI", server_->uri());
    ScopedEnv apps("RELAY_APPS", appsRoot("v1").path().string());
    ASSERT_EQ(cli::testing::run({"app", "pause", "jobs"}).exit_code, 0);
  }
  const std::string id = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] {
    return pendingByConsumer().count(std::string(invocation::kParkingConsumer)) == 1;
  })) << one->log();
  const CliRun result = cancel({"--app", "jobs", "--since", "1h", "--yes"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(id + "/jobs/bin/h.sh: cancelled before it started"), std::string::npos)
      << result.out;
  EXPECT_EQ(pending(), 0);
  {
    ScopedEnv uri("REDIS_URI", server_->uri());
    ScopedEnv apps("RELAY_APPS", appsRoot("v1").path().string());
    ASSERT_EQ(cli::testing::run({"app", "resume", "jobs"}).exit_code, 0);
  }
  std::this_thread::sleep_for(milliseconds(800));
  EXPECT_EQ(starts("jobs"), 0);
}

// An invocation deferred by its flow control (a per-key limit of 1 while another runs) is
// cancelled where it waits, chosen by --app, --filter and a window; the running one is left
// alone and finishes; the cancelled one never starts, and the key's next event is not queued
// behind it.
TEST_F(Cancel, AFlowDeferredInvocationIsCancelledAndTheFilterChoosesIt) {
  writeApp("v1", "jobs", jobsApp("    concurrency: {limit: 1, key: tenant}\n"),
           {{"bin/h.sh",
             "#!/bin/sh\nev=$(cat)\necho \"start $$ 0 $ev\" >> runs\n"
             "while [ -e hold ]; do sleep 0.05; done\n"}});
  appsRoot("v1").write("jobs/hold", "");
  auto one = worker("v1", "one");
  auto two = worker("v1", "two");
  const std::string first = xadd(R"({"kind":"job","tenant":"a","n":1})");
  ASSERT_TRUE(waitUntil([&] { return starts("jobs") == 1; })) << one->log() << two->log();
  const std::string second = xadd(R"({"kind":"job","tenant":"a","n":2})");
  ASSERT_TRUE(waitUntil([&] { return field(second, "relay:wait:jobs/bin/h.sh") != "<nil>"; }))
      << one->log() << two->log();
  appsRoot("v1").write("only-two.yaml", "n: [2]\n");
  const CliRun result =
      cancel({"--app", "jobs", "--handler", "bin/h.sh", "--filter",
              (appsRoot("v1").path() / "only-two.yaml").string(), "--from", first, "--yes"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, second + "/jobs/bin/h.sh: cancelled before it started\n" + second +
                            ": every invocation terminal: acknowledged\n");
  std::filesystem::remove(appsRoot("v1").path() / "jobs/hold");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; })) << one->log() << two->log();
  EXPECT_EQ(starts("jobs"), 1);
  EXPECT_EQ(field(first, "jobs/bin/h.sh").rfind("succeeded", 0), 0u);
  const std::string third = xadd(R"({"kind":"job","tenant":"a","n":3})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && starts("jobs") == 2; }))
      << one->log() << two->log();
  EXPECT_EQ(field(third, "jobs/bin/h.sh").rfind("succeeded", 0), 0u);
  for (const std::string& line : runs("jobs")) EXPECT_EQ(line.find("\"n\":2"), std::string::npos);
}

// A message no worker has read yet: the request is kept, and the first worker to read it
// acknowledges it without running anything.
TEST_F(Cancel, AMessageNotReadYetIsCancelledWhenAWorkerReadsIt) {
  writeApp("v1", "jobs", jobsApp(), {{"bin/h.sh", kStoppableHandler}});
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "$", "MKSTREAM"}).ok());
  const std::string id = xadd(R"({"kind":"job"})");
  const CliRun result = cancel({id});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, id + ": not started yet: cancelled when a worker reads it\n");
  auto one = worker("v1", "one");
  ASSERT_TRUE(waitUntil([&] { return field(id, "jobs/bin/h.sh") != "<nil>"; })) << one->log();
  EXPECT_TRUE(waitUntil([&] { return pending() == 0; })) << one->log();
  EXPECT_EQ(field(id, "jobs/bin/h.sh").rfind("cancelled:", 0), 0u);
  EXPECT_EQ(starts("jobs"), 0);
}

// A cancel racing the end of its attempt: whichever lands first decides, and the invocation has
// exactly one outcome, counted once (succeeded or cancelled), over many rounds.
TEST_F(Cancel, ACancelRacingAFinishingAttemptHasOneOutcomeRecordedOnce) {
  writeApp("v1", "jobs", jobsApp(),
           {{"bin/h.sh", "#!/bin/sh\necho \"start $$ 0\" >> runs\nsleep 0.2\n"}});
  auto one = worker("v1", "one", {"RELAY_TEST_BACKOFF=100ms"});
  auto two = worker("v1", "two", {"RELAY_TEST_BACKOFF=100ms"});
  constexpr int kRounds = 12;
  std::vector<std::string> ids;
  for (int i = 0; i < kRounds; ++i) {
    ids.push_back(xadd(R"({"kind":"job"})"));
    ASSERT_TRUE(waitUntil([&] { return starts("jobs") == i + 1; })) << one->log() << two->log();
    // From just before to just after the handler's own end (0.2 s).
    std::this_thread::sleep_for(milliseconds(150 + 10 * i));
    EXPECT_NE(cancel({ids.back()}).exit_code, 2);
  }
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; })) << one->log() << two->log();
  long long cancelled = 0, succeeded = 0;
  for (const std::string& id : ids) {
    const std::string marker = field(id, "jobs/bin/h.sh");
    const bool was_cancelled = marker.rfind("cancelled:", 0) == 0;
    EXPECT_TRUE(was_cancelled || marker.rfind("succeeded", 0) == 0) << marker;
    (was_cancelled ? cancelled : succeeded) += 1;
  }
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(starts("jobs"), kRounds);  // never run again
  EXPECT_EQ(stat("jobs/bin/h.sh", "cancelled"), cancelled);
  EXPECT_EQ(stat("jobs/bin/h.sh", "succeeded"), succeeded);
  EXPECT_EQ(stat("jobs/bin/h.sh", "failed"), 0);
  EXPECT_TRUE(dlq().empty());
}

// A worker killed (-9) mid-attempt, then the cancel: nobody reads the stop for that claim, and
// the worker that takes the claim over records the invocation cancelled instead of retrying it.
TEST_F(Cancel, AClaimOfAKilledWorkerIsRecordedCancelledByTheTakeover) {
  writeApp("v1", "jobs",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
           "    retries: 3\n    timeout: 2s\n",
           {{"bin/h.sh", kStoppableHandler}});
  auto one = worker("v1", "one", {"RELAY_TEST_BACKOFF=100ms"});
  const std::string id = xadd(R"({"kind":"job"})");
  ASSERT_TRUE(waitUntil([&] { return starts("jobs") == 1; })) << one->log();
  one->signal(SIGKILL);
  one->wait();
  const CliRun result = cancel({id});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(id + "/jobs/bin/h.sh: "), std::string::npos) << result.out;
  auto two = worker("v1", "two", {"RELAY_TEST_BACKOFF=100ms"});
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(20))) << two->log();
  EXPECT_EQ(field(id, "jobs/bin/h.sh").rfind("cancelled:", 0), 0u) << field(id, "jobs/bin/h.sh");
  EXPECT_EQ(starts("jobs"), 1);
  EXPECT_TRUE(dlq().empty());
}

}  // namespace
}  // namespace relay::testing
