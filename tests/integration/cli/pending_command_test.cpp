// `relay pending ls / dead-letter / ack` (docs/cli.md "relay pending"): the real binary against a
// real redis-server, a pending list set up by hand (each reason), and a terminal (a pty) for the
// confirmation.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_digest.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

using nlohmann::json;

/// Runs RELAY_BINARY with `args` on a new pseudo-terminal (stdin, stdout and stderr), types
/// `typed` once the question is asked, and returns the exit code and everything it printed.
BinaryRun runOnTerminal(const std::vector<std::string>& args, const std::vector<std::string>& env,
                        const std::string& typed) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return {};
  if (pid == 0) {
    for (const std::string& variable : env) ::putenv(const_cast<char*>(variable.c_str()));
    std::vector<char*> argv = {const_cast<char*>(RELAY_BINARY)};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(RELAY_BINARY, argv.data());
    ::_exit(127);
  }
  BinaryRun run;
  bool answered = false;
  char buffer[4096];
  for (int i = 0; i < 3000; ++i) {  // at most 30 s
    pollfd ready{master, POLLIN, 0};
    if (::poll(&ready, 1, 10) > 0) {
      const ssize_t got = ::read(master, buffer, sizeof buffer);
      if (got <= 0) break;  // EIO: the child closed the terminal
      run.out.append(buffer, static_cast<std::size_t>(got));
    }
    if (!answered && run.out.find("[y/N]") != std::string::npos) {
      const std::string line = typed + "\n";
      if (::write(master, line.data(), line.size()) < 0) break;
      answered = true;
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

class PendingCommand : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    apps_.write("shop/template.yaml",
                "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n");
    apps_.write("shop/bin/a.sh", "#!/bin/sh\necho replayed\n", 0755);
    ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
    for (const char* id : {"1000-0", "2000-0", "3000-0"}) {
      ASSERT_TRUE(redis_->command({"XADD", "events", id, "event", R"({"kind":"order"})"}).ok());
    }
    ASSERT_TRUE(
        redis_->command({"XREADGROUP", "GROUP", "relay", "worker-a", "STREAMS", "events", ">"})
            .ok());
    ASSERT_TRUE(redis_->command({"SET", "relay:events:worker:relay:worker-a", "{}"}).ok());
    // 1000-0: no state (never started). 2000-0: shop is paused. 3000-0: running on worker-a.
    ASSERT_TRUE(redis_->command({"SADD", "relay:events:paused:relay", "shop"}).ok());
    ASSERT_TRUE(redis_
                    ->command({"HSET", "relay:events:inv:relay:2000-0", "relay:plan",
                               "e 3 1000 shop/bin/a.sh\n"})
                    .ok());
    auto time = redis_->command({"TIME"});
    const long long now = std::stoll(std::string(*time->at(0)->string())) * 1000;
    ASSERT_TRUE(redis_
                    ->command({"HSET", "relay:events:inv:relay:3000-0", "relay:plan",
                               "e 3 1000 mail/bin/m.sh\n", "mail/bin/m.sh",
                               "running:1:t:" + std::to_string(now + 600'000)})
                    .ok());
  }
  std::vector<std::string> env() {
    return {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
            "RELAY_RUNTIME=process"};
  }
  BinaryRun relay(std::vector<std::string> args) { return runRelay(args, env()); }
  long long pending() {
    return *redis_->command({"XPENDING", "events", "relay"})->at(0)->integer();
  }
  static bool has(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
  }

  std::unique_ptr<redis::Connection> redis_;
  TempDir apps_;
};

TEST_F(PendingCommand, LsSaysWhyEachMessageIsPendingOldestFirst) {
  const std::string before = datasetDigest(*redis_);
  const BinaryRun run = relay({"pending", "ls"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::size_t no_state = run.out.find("1000-0");
  const std::size_t paused = run.out.find("2000-0");
  const std::size_t running = run.out.find("3000-0");
  ASSERT_NE(no_state, std::string::npos) << run.out;
  EXPECT_LT(no_state, paused);
  EXPECT_LT(paused, running);
  EXPECT_TRUE(has(run.out, "ID")) << run.out;
  EXPECT_TRUE(has(run.out, "no_state")) << run.out;
  EXPECT_TRUE(has(run.out, "app shop is paused")) << run.out;
  EXPECT_TRUE(has(run.out, "mail/bin/m.sh attempt 1 is running on worker-a")) << run.out;
  EXPECT_EQ(datasetDigest(*redis_), before) << "listing changes nothing";

  const BinaryRun listed = relay({"pending", "ls", "--json"});
  ASSERT_EQ(listed.exit_code, 0);
  const json list = json::parse(listed.out);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["reason"]["kind"], "no_state");
  EXPECT_EQ(list[1]["reason"]["kind"], "paused");
  EXPECT_EQ(list[1]["plan"], json::array({"shop/bin/a.sh"}));
  EXPECT_EQ(list[2]["reason"]["kind"], "running");
  EXPECT_EQ(list[2]["consumer"], "worker-a");
  EXPECT_EQ(list[2]["deliveries"], 1);
  EXPECT_EQ(list[2]["payload_exists"], true);
}

TEST_F(PendingCommand, LsFiltersByAppAgeAndIdAndLimits) {
  ASSERT_TRUE(redis_->command({"XADD", "events", "*", "event", "{}"}).ok());
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "worker-a", "STREAMS", "events", ">"}).ok());
  json list = json::parse(relay({"pending", "ls", "--json", "--app", "shop"}).out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], "2000-0");
  list = json::parse(relay({"pending", "ls", "--json", "--older-than", "1h"}).out);
  EXPECT_EQ(list.size(), 3u) << "the fresh message is younger than an hour";
  const BinaryRun limited = relay({"pending", "ls", "--limit", "1"});
  EXPECT_EQ(limited.exit_code, 0);
  EXPECT_TRUE(has(limited.out, "1000-0"));
  EXPECT_FALSE(has(limited.out, "2000-0"));
  EXPECT_TRUE(has(limited.err, "more are pending")) << limited.err;
  const BinaryRun named = relay({"pending", "ls", "3000-0", "9-9"});
  EXPECT_EQ(named.exit_code, 1);
  EXPECT_TRUE(has(named.out, "3000-0"));
  EXPECT_TRUE(has(named.err, "9-9 is not pending in group relay")) << named.err;
  EXPECT_EQ(relay({"pending", "ls", "--older-than", "soon"}).exit_code, 2);
  EXPECT_EQ(relay({"pending", "ls", "12"}).exit_code, 2);
  const BinaryRun nothing = relay({"pending", "ls", "--app", "nobody"});
  EXPECT_EQ(nothing.exit_code, 0);
  EXPECT_TRUE(has(nothing.out, "no pending message matches")) << nothing.out;
}

TEST_F(PendingCommand, DeadLetterWritesOperatorEntriesThatReplayAndAcknowledges) {
  const BinaryRun run = relay({"pending", "dead-letter", "2000-0", "1000-0", "--yes"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(has(run.out,
                  "dead-lettered 2000-0: 1 entry (shop/bin/a.sh) in relay:events:dlq; "
                  "acknowledged, state retained for 7d"))
      << run.out;
  EXPECT_TRUE(has(run.out, "dead-lettered 1000-0: 1 entry (-/-)")) << run.out;
  EXPECT_EQ(pending(), 1);
  const long long ttl = *redis_->command({"PTTL", "relay:events:inv:relay:2000-0"})->integer();
  EXPECT_GT(ttl, 6LL * 24 * 3600 * 1000);
  const json entries = json::parse(relay({"dlq", "ls", "--json"}).out);
  ASSERT_EQ(entries.size(), 2u);
  for (const json& entry : entries) {
    EXPECT_EQ(entry["kind"], "operator");
  }
  // Newest first: the `-` entry of 1000-0, then shop's, which can be replayed.
  EXPECT_EQ(entries[0]["app"], "-");
  EXPECT_EQ(entries[1]["handler"], "bin/a.sh");
  EXPECT_EQ(entries[1]["reason"], "operator: never started");
  EXPECT_EQ(relay({"dlq", "replay", entries[0]["id"]}).exit_code, 2);
  ASSERT_TRUE(redis_->command({"SREM", "relay:events:paused:relay", "shop"}).ok());
  const BinaryRun replayed = relay({"dlq", "replay", entries[1]["id"]});
  EXPECT_EQ(replayed.exit_code, 0) << replayed.err;
  EXPECT_TRUE(has(replayed.out, "[shop/bin/a.sh] replayed")) << replayed.out;
}

TEST_F(PendingCommand, ALiveClaimIsRefusedUnlessForcedAndNothingChanges) {
  const std::string before = datasetDigest(*redis_);
  BinaryRun run = relay({"pending", "ack", "3000-0", "--yes"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(has(run.err, "3000-0: mail/bin/m.sh is running by worker-a")) << run.err;
  EXPECT_TRUE(has(run.err, "--force acknowledges it anyway")) << run.err;
  EXPECT_EQ(datasetDigest(*redis_), before);
  run = relay({"pending", "ack", "3000-0", "--yes", "--force", "--json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json results = json::parse(run.out);
  EXPECT_EQ(results[0]["outcome"], "resolved");
  EXPECT_EQ(pending(), 2);
  EXPECT_EQ(*redis_->command({"XLEN", "relay:events:dlq"})->integer(), 0);
}

TEST_F(PendingCommand, UnknownOrMalformedIdsChangeNothing) {
  const std::string before = datasetDigest(*redis_);
  BinaryRun run = relay({"pending", "ack", "9-9", "--yes"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(has(run.err, "9-9: not pending in group relay")) << run.err;
  run = relay({"pending", "dead-letter", "1000-0", "nonsense", "--yes"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(has(run.err, "\"nonsense\" is not a message id")) << run.err;
  EXPECT_EQ(relay({"pending", "ack"}).exit_code, 2);
  EXPECT_EQ(datasetDigest(*redis_), before);
}

TEST_F(PendingCommand, OnATerminalItAsksFirst) {
  const std::string before = datasetDigest(*redis_);
  BinaryRun run = runOnTerminal({"pending", "ack", "1000-0"}, env(), "n");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(has(run.out, "acknowledge 1 message(s) of group relay of stream events? [y/N]"))
      << run.out;
  EXPECT_TRUE(has(run.out, "no_state")) << run.out;  // what is about to change
  EXPECT_TRUE(has(run.out, "not confirmed: nothing changed")) << run.out;
  EXPECT_EQ(datasetDigest(*redis_), before);
  run = runOnTerminal({"pending", "ack", "1000-0"}, env(), "y");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(has(run.out, "acknowledged 1000-0")) << run.out;
  EXPECT_EQ(pending(), 2);
}

}  // namespace
}  // namespace relay::testing
