// The real `relay start` as operators see it: /metrics after a scripted run, /healthz and
// `relay health` flipping while Redis is stopped and started again, /readyz, a busy
// RELAY_HTTP_ADDR, JSON logs. Process runtime, exec handlers in a temp apps root.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/system_clock.h"
#include "fakes/temp_dir.h"
#include "http/client.h"
#include "http/server.h"
#include "integration/ops/relay_binary.h"
#include "support/prometheus_text.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"
#include "support/worker_log.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

constexpr const char* kTemplate = R"(runtime: exec
events:
  - handler: bin/ok.sh
    pattern: {kind: [order]}
  - handler: bin/fail.sh
    pattern: {kind: [order], fail: [true]}
    retries: 0
)";

class RelayStartOps : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    apps_.write("shop/template.yaml", kTemplate);
    apps_.write("shop/bin/ok.sh", "#!/bin/sh\necho \"ok $RELAY_MESSAGE_ID\"\n", 0755);
    apps_.write("shop/bin/fail.sh", "#!/bin/sh\necho failing >&2\nexit 3\n", 0755);
  }
  std::vector<std::string> env() {
    return {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
            "RELAY_RUNTIME=process", "RELAY_HTTP_ADDR=127.0.0.1:0", "RELAY_CONSUMER=ops"};
  }
  std::unique_ptr<SpawnedProcess> start(std::vector<std::string> extra = {},
                                        const std::string& log = "relay.log") {
    // getenv() takes the first of duplicate names: an override replaces the default.
    std::vector<std::string> environment = env();
    for (const std::string& value : extra) {
      const std::string name = value.substr(0, value.find('=') + 1);
      std::erase_if(environment, [&](const std::string& e) { return e.rfind(name, 0) == 0; });
      environment.push_back(value);
    }
    auto relay = std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_BINARY, "start"},
                                                  environment, (logs_.path() / log).string());
    EXPECT_TRUE(relay->waitForLog("relay started")) << relay->log();
    address_ = httpAddressInLog(relay->log());
    EXPECT_GT(address_.port, 0) << relay->log();
    return relay;
  }
  std::string xadd(const std::string& event, const std::string& id = "*") {
    auto redis = server().connect();
    return std::string(*redis->command({"XADD", "events", id, "event", event})->string());
  }
  long long pending() {
    auto redis = server().connect();
    auto reply = redis->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  }
  http::Response get(const std::string& path) {
    auto response = http::get(address_, path, seconds(10), clock_);
    EXPECT_TRUE(response.ok()) << path << ": " << response.error().message;
    return response.ok() ? *response : http::Response{};
  }
  /// /healthz once it answers 503 (waiting up to 30 s), or its last answer.
  /// The first unhealthy /healthz that says `says` (a worker just started is unhealthy for a
  /// moment too: "not connected yet").
  http::Response unhealthyHealthz(const std::string& says) {
    http::Response healthz;
    SpawnedProcess::waitUntil(
        [&] {
          healthz = get("/healthz");
          return healthz.status == 503 && healthz.body.find(says) != std::string::npos;
        },
        seconds(30));
    return healthz;
  }
  BinaryRun health() { return runRelay({"health"}, {"RELAY_HTTP_ADDR=" + address_.toString()}); }

  SystemClock clock_;
  TempDir apps_;
  TempDir logs_;
  http::Address address_;
};

TEST_F(RelayStartOps, MetricsReflectAScriptedRun) {
  auto relay = start();
  xadd(R"({"kind":"order"})");
  xadd(R"({"kind":"order","fail":true})");
  xadd(R"({"kind":"nothing"})");
  xadd("not json");
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return pending() == 0; }, seconds(30)))
      << relay->log();
  // The pending gauge is refreshed by the housekeeper every 5 s: wait for a value of 0.
  std::unique_ptr<PrometheusText> metrics;
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        const auto response = get("/metrics");
        metrics = std::make_unique<PrometheusText>(response.body);
        return metrics->ok() && metrics->value("relay_pending_messages") == 0 &&
               metrics->value("relay_dlq_entries_total", {{"reason", "handler"}}) == 1;
      },
      seconds(30)))
      << (metrics ? metrics->error() : "") << relay->log();
  const auto response = get("/metrics");
  EXPECT_EQ(response.status, 200);
  const PrometheusText& text = *metrics;
  EXPECT_EQ(text.value("relay_events_total", {{"outcome", "matched"}}), 2);
  EXPECT_EQ(text.value("relay_events_total", {{"outcome", "unmatched"}}), 1);
  EXPECT_EQ(text.value("relay_events_total", {{"outcome", "malformed"}}), 1);
  EXPECT_EQ(text.value("relay_invocations_total",
                       {{"app", "shop"}, {"handler", "bin/ok.sh"}, {"outcome", "succeeded"}}),
            2);
  EXPECT_EQ(text.value("relay_invocations_total",
                       {{"app", "shop"}, {"handler", "bin/fail.sh"}, {"outcome", "exhausted"}}),
            1);
  EXPECT_EQ(text.value("relay_dlq_entries_total", {{"reason", "malformed"}}), 1);
  EXPECT_EQ(text.value("relay_invocation_duration_seconds_count"), 3);
  EXPECT_EQ(text.value("relay_inflight_invocations"), 0);
  EXPECT_EQ(text.value("relay_missing_payload_total"), 0);
  EXPECT_EQ(text.value("relay_reclaimed_total"), 0);
  // Every lifecycle call went through the group commit: at least start, begin and complete of
  // each of the three attempts.
  EXPECT_GE(text.value("relay_redis_pipelined_calls_total"), 9);
  EXPECT_GE(text.value("relay_redis_pipelines_total"), 1);

  EXPECT_EQ(get("/healthz").status, 200);
  const auto ready = get("/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(get("/nope").status, 404);

  // The same run through the operator commands.
  const std::vector<std::string> redis_env = {"REDIS_URI=" + server().uri()};
  const BinaryRun stats = runRelay({"stats", "--json"}, redis_env);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const auto stats_json = nlohmann::json::parse(stats.out);
  EXPECT_EQ(stats_json["ready_backlog"]["ready"], 0) << stats.out;  // everything ran
  const auto rows = stats_json["handlers"];
  ASSERT_EQ(rows.size(), 3u) << stats.out;  // -/-, shop/bin/fail.sh, shop/bin/ok.sh
  EXPECT_EQ(rows[0]["dlq"], 1);
  EXPECT_EQ(rows[1]["failed"], 1);
  EXPECT_EQ(rows[1]["dlq"], 1);
  EXPECT_EQ(rows[2]["succeeded"], 2);
  const BinaryRun dlq = runRelay({"dlq", "ls", "--json"}, redis_env);
  ASSERT_EQ(dlq.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(dlq.out).size(), 2u);

  relay->signal(SIGTERM);
  const int status = relay->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The ready backlog against what the real lifecycle parks (docs/operations.md "Ready backlog"):
// three failed first attempts wait a minute for their backoff and two messages of a paused app
// wait for its resume. XPENDING counts all five; the backlog counts none, in `relay stats` and in
// relay_ready_backlog. Resumed, the paused app's two run and the three retries still wait.
TEST_F(RelayStartOps, TheReadyBacklogLeavesOutRetriesInTheirBackoffAndAPausedAppsMessages) {
  apps_.write("later/template.yaml", R"(runtime: exec
events:
  - handler: bin/fail.sh
    pattern: {kind: [later]}
    retries: 2
)");
  apps_.write("later/bin/fail.sh", "#!/bin/sh\necho failing >&2\nexit 3\n", 0755);
  auto relay = start();
  const std::vector<std::string> cli_env = {"REDIS_URI=" + server().uri(),
                                            "RELAY_APPS=" + apps_.path().string()};
  for (int i = 0; i < 3; ++i) xadd(R"({"kind":"later"})");
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        const PrometheusText text(get("/metrics").body);
        return text.ok() && text.value("relay_invocations_total", {{"app", "later"},
                                                                   {"handler", "bin/fail.sh"},
                                                                   {"outcome", "failed"}}) == 3;
      },
      seconds(30)))
      << relay->log();
  const BinaryRun paused = runRelay({"app", "pause", "shop"}, cli_env);
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  xadd(R"({"kind":"order"})");
  xadd(R"({"kind":"order"})");

  nlohmann::json backlog;
  const auto stats = [&] {
    const BinaryRun run = runRelay({"stats", "--json"}, cli_env);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    backlog = nlohmann::json::parse(run.out, nullptr, false)["ready_backlog"];
    return backlog;
  };
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] { return stats().is_object() && backlog["waiting_pause"] == 2; }, seconds(30)))
      << backlog.dump() << relay->log();
  EXPECT_EQ(backlog["lag"], 0) << backlog.dump();
  EXPECT_EQ(backlog["pending"], 5) << backlog.dump();
  EXPECT_EQ(backlog["parked"], 5) << backlog.dump();
  EXPECT_EQ(backlog["waiting_backoff"], 3) << backlog.dump();
  EXPECT_EQ(backlog["ready"], 0) << backlog.dump();
  // The gauge says the same once the housekeeper refreshed it (every 5 s), next to the PEL size.
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        const PrometheusText text(get("/metrics").body);
        return text.ok() && text.value("relay_pending_messages") == 5 &&
               text.value("relay_ready_backlog") == 0;
      },
      seconds(30)))
      << get("/metrics").body;

  const BinaryRun resumed = runRelay({"app", "resume", "shop"}, cli_env);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] { return stats().is_object() && backlog["pending"] == 3; }, seconds(30)))
      << backlog.dump() << relay->log();
  EXPECT_EQ(backlog["waiting_backoff"], 3) << backlog.dump();
  EXPECT_EQ(backlog["waiting_pause"], 0) << backlog.dump();
  EXPECT_EQ(backlog["ready"], 0) << backlog.dump();
  relay->signal(SIGTERM);
  EXPECT_NE(relay->wait(), -1);
}

// Flow control's outcomes as operators see them after a real run (docs/apps.md "Flow control",
// docs/runtimes.md "Retry-after"): a duplicate, a throttled invocation waiting an hour for its
// turn and a handler asking to run again later, in `relay stats`, /metrics and `relay pending`.
TEST_F(RelayStartOps, FlowControlOutcomesShowInStatsMetricsAndPending) {
  apps_.write("flow/template.yaml", R"(runtime: exec
events:
  - handler: bin/once.sh
    pattern: {kind: [pay]}
    dedupe: {key: order}
  - handler: bin/slow.sh
    pattern: {kind: [report]}
    throttle: {limit: 1, period: 1h}
  - handler: bin/later.sh
    pattern: {kind: [call]}
)");
  apps_.write("flow/bin/once.sh", "#!/bin/sh\necho paid\n", 0755);
  apps_.write("flow/bin/slow.sh", "#!/bin/sh\necho reported\n", 0755);
  apps_.write("flow/bin/later.sh", "#!/bin/sh\necho 'retry-after: 1h'\nexit 75\n", 0755);
  auto relay = start();
  xadd(R"({"kind":"pay","order":7})");
  xadd(R"({"kind":"pay","order":7})");  // the producer sent it twice
  xadd(R"({"kind":"pay","order":8})");
  xadd(R"({"kind":"report"})");
  const std::string throttled = xadd(R"({"kind":"report"})");
  const std::string deferred = xadd(R"({"kind":"call"})");
  const auto flow = [](const char* handler, const char* outcome) {
    return PrometheusText::Labels{{"app", "flow"}, {"handler", handler}, {"outcome", outcome}};
  };
  std::unique_ptr<PrometheusText> metrics;
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        metrics = std::make_unique<PrometheusText>(get("/metrics").body);
        return metrics->ok() &&
               metrics->value("relay_invocations_total", flow("bin/once.sh", "succeeded")) == 2 &&
               metrics->value("relay_invocations_total", flow("bin/once.sh", "deduplicated")) ==
                   1 &&
               metrics->value("relay_invocations_total", flow("bin/slow.sh", "succeeded")) == 1 &&
               metrics->value("relay_invocations_total", flow("bin/slow.sh", "deferred")) == 1 &&
               metrics->value("relay_invocations_total", flow("bin/later.sh", "retry_after")) == 1;
      },
      seconds(30)))
      << get("/metrics").body << relay->log();
  EXPECT_EQ(pending(), 2);  // the throttled report and the call that asked to wait

  const std::vector<std::string> redis_env = {"REDIS_URI=" + server().uri()};
  const BinaryRun stats = runRelay({"stats", "--json"}, redis_env);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  std::map<std::string, nlohmann::json> rows;
  const auto stats_json = nlohmann::json::parse(stats.out);
  for (const auto& row : stats_json["handlers"]) {
    rows[row["app"].get<std::string>() + "/" + row["handler"].get<std::string>()] = row;
  }
  EXPECT_EQ(rows["flow/bin/once.sh"]["succeeded"], 2) << stats.out;
  EXPECT_EQ(rows["flow/bin/once.sh"]["deduplicated"], 1) << stats.out;
  EXPECT_EQ(rows["flow/bin/slow.sh"]["succeeded"], 1) << stats.out;
  EXPECT_EQ(rows["flow/bin/slow.sh"]["deferred"], 1) << stats.out;
  EXPECT_EQ(rows["flow/bin/later.sh"]["retry_after"], 1) << stats.out;
  EXPECT_EQ(rows["flow/bin/later.sh"]["failed"], 0) << stats.out;
  EXPECT_EQ(rows["flow/bin/later.sh"]["runs"], 1) << stats.out;
  const BinaryRun table = runRelay({"stats"}, redis_env);
  EXPECT_NE(table.out.find("DEFERRED  DEDUPLICATED  SUPERSEDED  RETRY-AFTER"), std::string::npos)
      << table.out;

  // The outcomes are counted just before each message is parked: `pending ls` is read until
  // both show the reason they wait for (a message between the two has none yet).
  BinaryRun ls;
  std::map<std::string, nlohmann::json> reasons;
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        ls = runRelay({"pending", "ls", "--json"}, redis_env);
        if (ls.exit_code != 0) return false;
        reasons.clear();
        for (const auto& message : nlohmann::json::parse(ls.out)) {
          reasons[message["id"].get<std::string>()] = message;
        }
        return reasons.size() == 2 && reasons[throttled]["reason"].is_object() &&
               reasons[deferred]["reason"].is_object();
      },
      seconds(30)))
      << ls.out << ls.err;
  const auto& wait = reasons[throttled];
  EXPECT_EQ(wait["reason"]["kind"], "throttled") << ls.out;
  EXPECT_EQ(wait["reason"]["handler"], "bin/slow.sh") << ls.out;
  // Its turn is about an hour away: one start per hour.
  const std::int64_t until = wait["reason"]["until_ms"];
  EXPECT_GT(until, std::stoll(throttled.substr(0, throttled.find('-'))) + 3'500'000) << ls.out;
  EXPECT_NE(wait["description"].get<std::string>().find("is throttled: its turn starts at"),
            std::string::npos)
      << ls.out;
  EXPECT_EQ(reasons[deferred]["reason"]["kind"], "retry_wait") << ls.out;
  EXPECT_EQ(reasons[deferred]["reason"]["detail"], "retry-after") << ls.out;

  relay->signal(SIGTERM);
  EXPECT_TRUE(WIFEXITED(relay->wait()));
}

TEST_F(RelayStartOps, HealthFlipsWhileRedisIsStoppedAndStartedAgain) {
  auto relay = start();
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return health().exit_code == 0; }, seconds(30)))
      << relay->log();
  BinaryRun run = health();
  EXPECT_EQ(run.out.rfind("healthy: ok (" + address_.toString() + ")\n", 0), 0u) << run.out;
  ASSERT_TRUE(server().stop().ok());
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return health().exit_code == 1; }, seconds(30)))
      << relay->log();
  run = health();
  EXPECT_NE(run.err.find("unhealthy (HTTP 503 from " + address_.toString() + ")"),
            std::string::npos)
      << run.err;
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return get("/readyz").status == 503; }, seconds(30)));
  ASSERT_TRUE(server().start().ok());
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return health().exit_code == 0; }, seconds(60)))
      << relay->log();
  // The worker recreated the group on the empty restarted server: ready again.
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return get("/readyz").status == 200; }, seconds(30)));
  relay->signal(SIGTERM);
  EXPECT_NE(relay->wait(), -1);
}

// After a failover the old master may come back as a replica: Redis answers every command, but
// each write is refused with READONLY. That is unhealthy, with the reason, until it is a master.
TEST_F(RelayStartOps, HealthFailsWithTheReasonWhileTheServerIsAReadOnlyReplica) {
  auto relay = start();
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return health().exit_code == 0; }, seconds(30)))
      << relay->log();
  auto master = RedisServer::create();
  ASSERT_TRUE(master.ok()) << master.error().message;
  auto admin = server().connect();
  ASSERT_TRUE(admin->command({"REPLICAOF", "127.0.0.1", std::to_string((*master)->port())}).ok());
  // The switch itself may first drop the worker's blocked read ("connection closed"); then
  // every write is refused with READONLY, and that must be what /healthz and relay health say.
  http::Response healthz;
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        healthz = get("/healthz");
        return healthz.status == 503 && healthz.body.find("READONLY") != std::string::npos;
      },
      seconds(30)))
      << healthz.status << " " << healthz.body << relay->log();
  EXPECT_EQ(health().exit_code, 1);
  ASSERT_TRUE(admin->command({"REPLICAOF", "NO", "ONE"}).ok());
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return health().exit_code == 0; }, seconds(30)))
      << relay->log();
  relay->signal(SIGTERM);
  EXPECT_NE(relay->wait(), -1);
}

TEST_F(RelayStartOps, ReadyzNeedsALoadedApp) {
  TempDir empty;
  auto relay = start({"RELAY_APPS=" + empty.path().string()});
  ASSERT_TRUE(
      SpawnedProcess::waitUntil([&] { return get("/healthz").status == 200; }, seconds(30)));
  const auto ready = get("/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_NE(ready.body.find("no app loaded from " + empty.path().string()), std::string::npos)
      << ready.body;
}

TEST_F(RelayStartOps, ABusyHttpAddressIsAClearStartupError) {
  auto busy = http::HttpServer::create({"127.0.0.1", 0}, {}, clock_);
  ASSERT_TRUE(busy.ok());
  const std::string addr = (*busy)->address().toString();
  SpawnedProcess relay({RELAY_BINARY, "start"},
                       {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
                        "RELAY_RUNTIME=process", "RELAY_HTTP_ADDR=" + addr},
                       (logs_.path() / "busy.log").string());
  const int status = relay.wait();
  ASSERT_TRUE(WIFEXITED(status)) << relay.log();
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(relay.log().find("relay start: RELAY_HTTP_ADDR=" + addr + ": cannot listen on " + addr),
            std::string::npos)
      << relay.log();
  auto redis = server().connect();
  EXPECT_EQ(*redis->command({"EXISTS", "events"})->integer(), 0);  // never read Redis
}

TEST_F(RelayStartOps, AMalformedHttpAddressIsAUsageError) {
  const BinaryRun run =
      runRelay({"start"}, {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
                           "RELAY_HTTP_ADDR=localhost"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("RELAY_HTTP_ADDR"), std::string::npos) << run.err;
}

TEST_F(RelayStartOps, JsonLogsAreOneObjectPerLine) {
  auto relay = start({"RELAY_LOG_FORMAT=json"});
  const std::string id = xadd(R"({"kind":"order"})");
  ASSERT_TRUE(relay->waitForLog("invocation succeeded")) << relay->log();
  relay->signal(SIGTERM);
  relay->wait();
  std::istringstream lines(relay->log());
  std::string line;
  int succeeded = 0;
  int output = 0;
  while (std::getline(lines, line)) {
    nlohmann::json record;
    ASSERT_NO_THROW(record = nlohmann::json::parse(line)) << line;
    ASSERT_TRUE(record.contains("time") && record.contains("level") && record.contains("message"))
        << line;
    if (record["message"] == "invocation succeeded") {
      ++succeeded;
      EXPECT_EQ(record["message_id"], id);
      EXPECT_EQ(record["app"], "shop");
      EXPECT_EQ(record["handler"], "bin/ok.sh");
      EXPECT_EQ(record["attempt"], "1");
      EXPECT_EQ(record["outcome"], "succeeded");
      EXPECT_TRUE(record.contains("duration"));
    }
    if (record["level"] == "output" && record["message"] == "[shop/bin/ok.sh] ok " + id) ++output;
  }
  EXPECT_EQ(succeeded, 1) << relay->log();
  EXPECT_EQ(output, 1) << relay->log();
}

// docs/operations.md "HTTP endpoints": failing lifecycle scripts make the worker unhealthy, with
// the reason, and it is healthy again once they succeed. Here the state keys of three messages are
// strings (WRONGTYPE for every script that reads them): the reader's own calls all succeed.
TEST_F(RelayStartOps, HealthzReflectsFailingLifecycleScriptsAndRecovers) {
  auto relay = start();
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return get("/healthz").status == 200; }, seconds(30)))
      << relay->log();
  auto redis = server().connect();
  auto time = redis->command({"TIME"});
  const long long ms = std::stoll(std::string(*time->at(0)->string())) * 1000 + 1000;
  for (int i = 1; i <= 3; ++i) {
    const std::string id = std::to_string(ms) + "-" + std::to_string(i);
    ASSERT_TRUE(redis->command({"SET", "relay:events:inv:relay:" + id, "not a hash"}).ok());
    xadd(R"({"kind":"order"})", id);
  }
  const http::Response healthz = unhealthyHealthz("lifecycle store calls are failing: ");
  ASSERT_EQ(healthz.status, 503) << relay->log();
  // Each start fails, and so does the release of what its token might hold, which the renewer
  // repeats every 10 s: whichever run is longest is named.
  EXPECT_NE(healthz.body.find("lifecycle store calls are failing: "), std::string::npos)
      << healthz.body;
  EXPECT_NE(healthz.body.find(" failed 3 times in a row since "), std::string::npos)
      << healthz.body;
  EXPECT_NE(healthz.body.find("WRONGTYPE"), std::string::npos) << healthz.body;
  const BinaryRun unhealthy = health();
  EXPECT_EQ(unhealthy.exit_code, 1);
  EXPECT_NE(unhealthy.err.find("lifecycle store calls are failing"), std::string::npos)
      << unhealthy.err;
  // The keys repaired, the repeated releases succeed, and so does a new message's start.
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(redis
                    ->command({"DEL", "relay:events:inv:relay:" + std::to_string(ms) + "-" +
                                          std::to_string(i)})
                    .ok());
  }
  xadd(R"({"kind":"order"})");
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return get("/healthz").status == 200; }, seconds(30)))
      << relay->log();
  relay->signal(SIGTERM);
  EXPECT_NE(relay->wait(), -1);
}

// The same when an ACL forbids a command the lifecycle scripts run (here HSET, which nothing
// else on the reader's path needs): unhealthy with Redis's refusal, healthy again once allowed.
TEST_F(RelayStartOps, HealthzSaysWhenAnAclForbidsWhatTheLifecycleScriptsRun) {
  auto admin = server().connect();
  ASSERT_TRUE(admin->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  ASSERT_TRUE(admin->command({"HSET", "relay:events:group:relay", "position", "0-0"}).ok());
  ASSERT_TRUE(
      admin->command({"ACL", "SETUSER", "relay", "on", ">pw", "~*", "&*", "+@all", "-hset"}).ok());
  auto relay = start({"REDIS_URI=redis://relay:pw@127.0.0.1:" + std::to_string(server().port())});
  for (int i = 0; i < 3; ++i) xadd(R"({"kind":"order"})");
  const http::Response healthz = unhealthyHealthz("lifecycle store calls are failing: ");
  ASSERT_EQ(healthz.status, 503) << relay->log();
  EXPECT_NE(healthz.body.find("lifecycle store calls are failing: "), std::string::npos)
      << healthz.body;
  EXPECT_NE(healthz.body.find("try_start failed "), std::string::npos) << healthz.body;
  EXPECT_NE(healthz.body.find("can't run this command"), std::string::npos) << healthz.body;
  ASSERT_TRUE(admin->command({"ACL", "SETUSER", "relay", "+hset"}).ok());
  xadd(R"({"kind":"order"})");
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return get("/healthz").status == 200; }, seconds(30)))
      << relay->log();
  relay->signal(SIGTERM);
  EXPECT_NE(relay->wait(), -1);
}

// docs/operations.md "Pending messages": the oldest pending message, why it is pending, and the
// entry holding trimming back, on /status, /metrics, in `relay health` and in the log.
TEST_F(RelayStartOps, StatusNamesTheOldestPendingMessageAndWhatHoldsTrimmingBack) {
  auto redis = server().connect();
  ASSERT_TRUE(redis->command({"SADD", "relay:events:paused:relay", "shop"}).ok());
  auto relay = start();
  // An entry from 1970: far older than REDIS_STREAM_RETENTION (24h), and its app is paused.
  xadd(R"({"kind":"order"})", "1000-0");
  nlohmann::json status;
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        status = nlohmann::json::parse(get("/status").body, nullptr, false);
        return status.is_object() && status["pending"]["oldest"].is_object() &&
               status["pending"]["trim_held_back"].is_object();
      },
      seconds(30)))
      << status.dump() << relay->log();
  EXPECT_EQ(status["healthy"], true);
  const auto& oldest = status["pending"]["oldest"];
  EXPECT_EQ(oldest["id"], "1000-0");
  EXPECT_EQ(oldest["reason"]["kind"], "paused") << oldest.dump();
  EXPECT_EQ(oldest["reason"]["app"], "shop");
  EXPECT_EQ(status["pending"]["trim_held_back"]["group"], "relay");
  EXPECT_EQ(status["pending"]["trim_held_back"]["message"]["id"], "1000-0");
  const PrometheusText metrics(get("/metrics").body);
  ASSERT_TRUE(metrics.ok()) << metrics.error();
  EXPECT_GT(*metrics.value("relay_oldest_pending_age_seconds"), 1e9);
  EXPECT_EQ(metrics.value("relay_trim_held_back_info",
                          {{"group", "relay"}, {"id", "1000-0"}, {"reason", "paused"}}),
            1);
  const BinaryRun run = health();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("pending: 1 messages"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("oldest pending: 1000-0, "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("paused: app shop is paused"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("trimming held back (group relay, REDIS_STREAM_RETENTION 1d) by: 1000-0"),
            std::string::npos)
      << run.out;
  EXPECT_TRUE(relay->waitForLog("stream trimming is held back")) << relay->log();
  relay->signal(SIGTERM);
  EXPECT_NE(relay->wait(), -1);
}

// docs/operations.md "A destroyed consumer group": the first creation is at 0 (what was
// published before the first worker runs), a group destroyed between two runs comes back
// where it stood: nothing already handled runs again, and the worker says what happened.
TEST_F(RelayStartOps, AGroupDestroyedBetweenRunsIsRecreatedWhereItStood) {
  const std::string before = xadd(R"({"kind":"order"})");
  auto first = start();
  const std::string during = xadd(R"({"kind":"order"})");
  // Both run, in either order (the pool runs them at once).
  ASSERT_TRUE(first->waitForLog("ok " + during)) << first->log();
  EXPECT_TRUE(first->waitForLog("ok " + before)) << first->log();
  auto redis = server().connect();
  // The housekeeper records the position at its next refresh (every 5 s).
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        auto position = redis->command({"HGET", "relay:events:group:relay", "position"});
        return position.ok() && !position->isNil() && *position->string() == during;
      },
      seconds(30)))
      << first->log();
  first->signal(SIGTERM);
  EXPECT_NE(first->wait(), -1);
  ASSERT_TRUE(redis->command({"XGROUP", "DESTROY", "events", "relay"}).ok());
  const std::string after = xadd(R"({"kind":"order"})");
  auto second = start({}, "second.log");
  ASSERT_TRUE(second->waitForLog("ok " + after)) << second->log();
  EXPECT_TRUE(second->waitForLog("the consumer group was missing")) << second->log();
  EXPECT_EQ(second->log().find("ok " + before), std::string::npos) << second->log();
  EXPECT_EQ(second->log().find("ok " + during), std::string::npos) << second->log();
  EXPECT_NE(second->log().find("at=" + during), std::string::npos) << second->log();
  const PrometheusText metrics(get("/metrics").body);
  EXPECT_EQ(metrics.value("relay_group_recreated_total"), 1);
  second->signal(SIGTERM);
  EXPECT_NE(second->wait(), -1);
}

}  // namespace
}  // namespace relay::testing
