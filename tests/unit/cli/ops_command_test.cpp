// `relay dlq`, `relay stats` and `relay health` where no Redis or worker is needed: usage
// errors (exit 2) and unreachable peers (exit 1). The Redis-backed paths are in
// tests/integration/ops.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <sstream>

#include "cli/table.h"
#include "common/system_clock.h"
#include "http/server.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::CliRun;
using testing::ScopedEnv;

// A loopback port nothing listens on (bound, then released).
int closedPort() {
  SystemClock clock;
  auto server = http::HttpServer::create({"127.0.0.1", 0}, {}, clock);
  EXPECT_TRUE(server.ok());
  return server.ok() ? (*server)->address().port : 1;
}

TEST(DlqCommand, NeedsASubcommand) { EXPECT_EQ(testing::run({"dlq"}).exit_code, 2); }

TEST(DlqCommand, AnIdThatIsNotAStreamIdIsAUsageError) {
  for (const char* command : {"inspect", "replay", "rm"}) {
    const CliRun result = testing::run({"dlq", command, "not-an-id"});
    EXPECT_EQ(result.exit_code, 2) << command;
    EXPECT_NE(result.err.find("is not a DLQ entry id"), std::string::npos) << result.err;
  }
}

TEST(DlqCommand, ABareMillisecondIdIsAUsageError) {
  EXPECT_EQ(testing::run({"dlq", "rm", "1700000000000"}).exit_code, 2);
}

TEST(DlqCommand, IdIsRequired) { EXPECT_EQ(testing::run({"dlq", "inspect"}).exit_code, 2); }

TEST(DlqCommand, LimitMustBePositive) {
  EXPECT_EQ(testing::run({"dlq", "ls", "--limit", "0"}).exit_code, 2);
  EXPECT_EQ(testing::run({"dlq", "ls", "--limit", "many"}).exit_code, 2);
}

TEST(DlqCommand, ABadRedisUriIsAUsageErrorNamingTheVariable) {
  ScopedEnv uri("REDIS_URI", "http://nope:1");
  const CliRun result = testing::run({"dlq", "ls"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("REDIS_URI"), std::string::npos) << result.err;
}

TEST(DlqCommand, UnreachableRedisFailsWithExit1NamingTheServerOnce) {
  const std::string address = "127.0.0.1:" + std::to_string(closedPort());
  ScopedEnv uri("REDIS_URI", address);
  const CliRun result = testing::run({"dlq", "ls"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err,
            "relay dlq ls: cannot reach Redis at " + address + ": Connection refused\n");
}

TEST(DlqCommand, ReplayRejectsAnUnknownRuntime) {
  ScopedEnv uri("REDIS_URI", "127.0.0.1:" + std::to_string(closedPort()));
  const CliRun result = testing::run({"dlq", "replay", "1-0", "--runtime", "vm"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--runtime"), std::string::npos) << result.err;
}

TEST(StatsCommand, UnreachableRedisFailsWithExit1) {
  ScopedEnv uri("REDIS_URI", "127.0.0.1:" + std::to_string(closedPort()));
  EXPECT_EQ(testing::run({"stats"}).exit_code, 1);
  EXPECT_EQ(testing::run({"stats", "reset"}).exit_code, 1);
}

TEST(HealthCommand, NoWorkerListeningIsUnhealthy) {
  ScopedEnv addr("RELAY_HTTP_ADDR", "127.0.0.1:" + std::to_string(closedPort()));
  const CliRun result = testing::run({"health"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.rfind("unhealthy: no worker answered at 127.0.0.1:", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

TEST(HealthCommand, ABadAddressIsAUsageError) {
  ScopedEnv addr("RELAY_HTTP_ADDR", "nowhere");
  const CliRun result = testing::run({"health"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("RELAY_HTTP_ADDR"), std::string::npos) << result.err;
}

TEST(HealthCommand, AnswersFromTheWorkersHealthz) {
  SystemClock clock;
  auto server = http::HttpServer::create({"127.0.0.1", 0}, {}, clock);
  ASSERT_TRUE(server.ok());
  std::atomic<int> status = 200;
  (*server)->handle("/healthz", [&status](const http::HttpRequest&) {
    const int now = status.load();
    return http::HttpReply{now, now == 200 ? "ok\n" : "redis down\nmore\n"};
  });
  ASSERT_TRUE((*server)->start().ok());
  ScopedEnv addr("RELAY_HTTP_ADDR", (*server)->address().toString());
  CliRun result = testing::run({"health"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, "healthy: ok (" + (*server)->address().toString() + ")\n");
  status = 503;
  result = testing::run({"health"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err,
            "unhealthy (HTTP 503 from " + (*server)->address().toString() + "): redis down\n");
}

TEST(HealthCommand, PrintsWhatTheWorkerLearnedOfThePendingMessages) {
  SystemClock clock;
  auto server = http::HttpServer::create({"127.0.0.1", 0}, {}, clock);
  ASSERT_TRUE(server.ok());
  (*server)->handle("/healthz", [](const http::HttpRequest&) {
    return http::HttpReply{200, "ok\n"};
  });
  const std::string message = R"({"id":"1000-0","consumer":"w","idle_ms":5,"deliveries":2,
    "age_ms":7384000,"parked":false,"owner_alive":true,"due_at_ms":null,"plan":["shop/bin/a"],
    "reason":{"kind":"paused","app":"shop","handler":"bin/a"},
    "description":"app shop is paused"})";
  (*server)->handle("/status", [&message](const http::HttpRequest&) {
    return http::HttpReply{
        200,
        R"({"healthy":true,"problems":[],"redis":"db:6379","group":{"exists":true},
            "pending":{"checked":true,"problem":"","count":3,"oldest":)" +
            message + R"(,"retention_ms":86400000,"trim_held_back":{"group":"relay","message":)" +
            message + "}}}",
        "application/json"};
  });
  ASSERT_TRUE((*server)->start().ok());
  ScopedEnv addr("RELAY_HTTP_ADDR", (*server)->address().toString());
  CliRun result = testing::run({"health"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "healthy: ok (" + (*server)->address().toString() +
                ")\n"
                "pending: 3 messages\n"
                "oldest pending: 1000-0, 2h3m4s old, held by w (2 deliveries): paused: app shop "
                "is paused\n"
                "trimming held back (group relay, REDIS_STREAM_RETENTION 1d) by: 1000-0, 2h3m4s "
                "old, held by w (2 deliveries): paused: app shop is paused\n");
  result = testing::run({"health", "--json"});
  EXPECT_EQ(result.exit_code, 0);
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["healthy"], true);
  EXPECT_EQ(json["pending"]["oldest"]["reason"]["kind"], "paused");
  EXPECT_EQ(json["pending"]["trim_held_back"]["message"]["id"], "1000-0");
}

TEST(Shorten, CutsOnACharacterBoundaryWithAnEllipsis) {
  EXPECT_EQ(shorten("short", 10), "short");
  EXPECT_EQ(shorten("exactly ten", 11), "exactly ten");
  EXPECT_EQ(shorten("a much longer reason", 10), "a much ...");
  EXPECT_EQ(shorten("ééééé", 6), "é...");
}

TEST(PrintTable, AlignsColumnsWithoutTrailingBlanks) {
  std::ostringstream out;
  printTable(out, {{"ID", "APP", "REASON"}, {"1-0", "users", ""}, {"10-2", "a", "exit 3"}});
  EXPECT_EQ(out.str(), "ID    APP    REASON\n1-0   users\n10-2  a      exit 3\n");
}

}  // namespace
}  // namespace relay::cli
