// `relay app pause/resume` and what they do to real workers: the real binary against a real
// redis-server, `relay start` on the process runtime with exec handlers in a temp apps root.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "common/system_clock.h"
#include "fakes/temp_dir.h"
#include "http/client.h"
#include "integration/ops/relay_binary.h"
#include "stream/stream_entry.h"
#include "support/prometheus_text.h"
#include "support/redis_digest.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

class Pause : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    // `shop` records every run (message id, attempt, trigger); `other` likewise. A schedule on
    // shop: every worker publishes its latest missed occurrence at start (the catch-up).
    for (const char* app : {"shop", "other"}) {
      const std::string record = (apps_.path() / (std::string(app) + ".runs")).string();
      apps_.write(
          std::string(app) + "/bin/record.sh",
          "#!/bin/sh\necho \"$RELAY_MESSAGE_ID $RELAY_ATTEMPT $RELAY_TRIGGER\" >> " + record + "\n",
          0755);
      apps_.write(std::string(app) + "/template.yaml",
                  std::string("runtime: exec\nevents:\n  - handler: bin/record.sh\n"
                              "    pattern: {app: [") +
                      app + "]}\n" +
                      (std::string(app) == "shop" ? "schedules:\n  - name: tick\n    cron: \"* * "
                                                    "* * *\"\n    handler: bin/record.sh\n"
                                                  : ""));
    }
  }
  std::vector<std::string> env() {
    return {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
            "RELAY_RUNTIME=process", "RELAY_HTTP_ADDR=127.0.0.1:0"};
  }
  BinaryRun relay(std::vector<std::string> args) { return runRelay(args, env()); }
  /// Messages the parking consumer holds (the XPENDING summary).
  long long parked() {
    auto reply = redis_->command({"XPENDING", "events", "relay"});
    if (!reply.ok() || reply->size() < 4 || reply->at(3)->isNil()) return 0;
    auto rows = reply->at(3)->elements();  // kept: a range-for over a temporary's value dangles
    if (!rows.ok()) return 0;
    for (const auto& row : *rows) {
      if (*row.at(0)->string() == "relay:parked")
        return std::stoll(std::string(*row.at(1)->string()));
    }
    return 0;
  }
  std::unique_ptr<SpawnedProcess> start(const std::string& consumer) {
    std::vector<std::string> environment = env();
    environment.push_back("RELAY_CONSUMER=" + consumer);
    auto worker = std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_BINARY, "start"},
                                                   environment,
                                                   (logs_.path() / (consumer + ".log")).string());
    EXPECT_TRUE(worker->waitForLog("relay started")) << worker->log();
    return worker;
  }
  http::Address httpOf(const SpawnedProcess& worker) {
    std::smatch match;
    const std::string log = worker.log();
    if (!std::regex_search(log, match, std::regex("http=127\\.0\\.0\\.1:([0-9]+)"))) return {};
    return {"127.0.0.1", std::stoi(match[1])};
  }
  double pausedGauge(const SpawnedProcess& worker, const std::string& app) {
    SystemClock clock;
    auto response = http::get(httpOf(worker), "/metrics", seconds(10), clock);
    if (!response.ok()) return -1;
    const PrometheusText metrics(response->body);
    EXPECT_TRUE(metrics.ok()) << metrics.error();
    return metrics.value("relay_app_paused", {{"app", app}}).value_or(-2);
  }
  std::string publish(const std::string& app) {
    return std::string(
        *redis_->command({"XADD", "events", "*", "event", R"({"app":")" + app + R"("})"})
             ->string());
  }
  std::string runs(const std::string& app) const { return apps_.read(app + ".runs"); }
  long long pending() {
    auto reply = redis_->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  }
  // The invocation state of `id` for shop's handler: empty when no attempt was ever claimed.
  std::string shopState(const std::string& id) {
    auto reply = redis_->command({"HGET", "relay:events:inv:relay:" + id, "shop/bin/record.sh"});
    if (!reply.ok() || reply->isNil()) return "";
    return std::string(*reply->string());
  }
  bool contains(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
  }

  std::unique_ptr<redis::Connection> redis_;
  TempDir apps_;
  TempDir logs_;
};

TEST_F(Pause, PauseAndResumeChangeTheClusterWideSet) {
  BinaryRun paused = relay({"app", "pause", "shop"});
  EXPECT_EQ(paused.exit_code, 0) << paused.err;
  EXPECT_TRUE(contains(paused.out, "paused shop")) << paused.out;
  // The group's set (two groups on one stream are two deployments).
  EXPECT_EQ(*redis_->command({"SISMEMBER", "relay:events:paused:relay", "shop"})->integer(), 1);
  paused = relay({"app", "pause", "shop"});
  EXPECT_EQ(paused.exit_code, 0);
  EXPECT_TRUE(contains(paused.out, "already paused: shop")) << paused.out;

  BinaryRun resumed = relay({"app", "resume", "shop"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(contains(resumed.out, "resumed shop")) << resumed.out;
  EXPECT_EQ(*redis_->command({"EXISTS", "relay:events:paused:relay"})->integer(), 0);
  resumed = relay({"app", "resume", "shop"});
  EXPECT_EQ(resumed.exit_code, 0);
  EXPECT_TRUE(contains(resumed.out, "not paused: shop")) << resumed.out;
}

TEST_F(Pause, UnknownOrInvalidNamesChangeNothing) {
  (void)redis_->command({"SADD", "relay:events:paused", "other"});
  const std::string before = datasetDigest(*redis_);
  const BinaryRun unknown = relay({"app", "pause", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(contains(unknown.err, "no app named \"nope\"")) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "nothing changed")) << unknown.err;
  EXPECT_EQ(relay({"app", "resume", "nope"}).exit_code, 1);
  const BinaryRun invalid = relay({"app", "pause", "Shop!"});
  EXPECT_EQ(invalid.exit_code, 2);
  EXPECT_TRUE(contains(invalid.err, "is not an app name")) << invalid.err;
  EXPECT_EQ(relay({"app", "pause"}).exit_code, 2);
  EXPECT_EQ(datasetDigest(*redis_), before);
  const BinaryRun unreachable = runRelay(
      {"app", "pause", "shop"}, {"REDIS_URI=127.0.0.1:1", "RELAY_APPS=" + apps_.path().string()});
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_TRUE(contains(unreachable.err, "cannot reach Redis")) << unreachable.err;
}

// Also: the stream-wide set of an earlier Relay is honoured and emptied by the resume.
TEST_F(Pause, AnAppGoneFromTheRootCanStillBeResumed) {
  (void)redis_->command({"SADD", "relay:events:paused", "retired"});
  const BinaryRun resumed = relay({"app", "resume", "retired"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(*redis_->command({"EXISTS", "relay:events:paused"})->integer(), 0);
}

TEST_F(Pause, AppLsShowsPausedApps) {
  ASSERT_EQ(relay({"app", "pause", "shop"}).exit_code, 0);
  const BinaryRun table = relay({"app", "ls"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("shop +exec +1 +1 +yes +no +paused")))
      << table.out;
  const BinaryRun listed = relay({"app", "ls", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const json apps = json::parse(listed.out);
  ASSERT_EQ(apps.size(), 2u);
  EXPECT_EQ(apps[0]["name"], "other");
  EXPECT_EQ(apps[0]["paused"], false);
  EXPECT_EQ(apps[0]["available"], true);
  EXPECT_EQ(apps[1]["name"], "shop");
  EXPECT_EQ(apps[1]["paused"], true);
  EXPECT_EQ(apps[1]["available"], false);
  EXPECT_EQ(apps[1]["reason"], "paused");
  // Without Redis the apps are still listed, the paused state unknown.
  const BinaryRun offline = runRelay(
      {"app", "ls", "--json"},
      {"REDIS_URI=127.0.0.1:1", "RELAY_APPS=" + apps_.path().string(), "RELAY_RUNTIME=process"});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_TRUE(contains(offline.err, "note: paused apps unknown")) << offline.err;
  EXPECT_TRUE(json::parse(offline.out)[1]["paused"].is_null());
}

TEST_F(Pause, PausedAppsEventsStayPendingWithoutAttemptsAndResumeDrainsThem) {
  ASSERT_EQ(relay({"app", "pause", "shop"}).exit_code, 0);
  auto worker = start("w1");
  EXPECT_TRUE(worker->waitForLog("app paused")) << worker->log();
  const std::string first = publish("shop");
  const std::string second = publish("shop");
  const std::string unrelated = publish("other");
  // Other apps keep running.
  ASSERT_TRUE(
      SpawnedProcess::waitUntil([&] { return contains(runs("other"), unrelated); }, seconds(30)))
      << worker->log();
  // The paused app's messages are parked (docs/pipeline.md "Waiting"): both events and the
  // schedule's occurrence.
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return parked() == 3; }, seconds(30)))
      << worker->log();
  // The schedule kept publishing (its catch-up occurrence), and it waits too.
  auto reply = redis_->command({"XRANGE", "events", "-", "+"});
  const auto entries = stream::parseEntries(reply->view());
  ASSERT_TRUE(entries.ok());
  EXPECT_TRUE(std::any_of(entries->begin(), entries->end(), [](const stream::StreamEntry& entry) {
    return entry.find("relay_schedule") != nullptr;
  }));
  EXPECT_EQ(runs("shop"), "");
  EXPECT_EQ(pending(), 3);          // both events and the occurrence
  EXPECT_EQ(shopState(first), "");  // never claimed: no attempt charged
  EXPECT_EQ(shopState(second), "");
  EXPECT_EQ(pausedGauge(*worker, "shop"), 1);
  EXPECT_EQ(pausedGauge(*worker, "other"), 0);

  ASSERT_EQ(relay({"app", "resume", "shop"}).exit_code, 0);
  // Within seconds (the resume makes the parked messages due: the due-retry poller's next
  // second), not after the reclaimer's minute.
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return pending() == 0; }, seconds(20)))
      << worker->log();
  const std::string shop_runs = runs("shop");
  EXPECT_TRUE(contains(shop_runs, first + " 1 event")) << shop_runs;
  EXPECT_TRUE(contains(shop_runs, second + " 1 event")) << shop_runs;
  EXPECT_TRUE(contains(shop_runs, " 1 schedule")) << shop_runs;
  // The gauge follows the worker's 2 s poll of the paused set.
  EXPECT_TRUE(
      SpawnedProcess::waitUntil([&] { return pausedGauge(*worker, "shop") == 0; }, seconds(10)));
  worker->signal(SIGTERM);
  EXPECT_NE(worker->wait(), -1);
}

TEST_F(Pause, EveryRunningWorkerSeesAPauseWithinSeconds) {
  auto w1 = start("w1");
  auto w2 = start("w2");
  ASSERT_EQ(relay({"app", "pause", "shop"}).exit_code, 0);
  ASSERT_TRUE(w1->waitForLog("app paused", seconds(10))) << w1->log();
  ASSERT_TRUE(w2->waitForLog("app paused", seconds(10))) << w2->log();
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(publish("shop"));
  // Six events and each worker's catch-up occurrence, all parked.
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return parked() >= 6; }, seconds(30)));
  for (const std::string& id : ids) {
    EXPECT_FALSE(contains(runs("shop"), id));
    EXPECT_EQ(shopState(id), "");
  }
  ASSERT_EQ(relay({"app", "resume", "shop"}).exit_code, 0);
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        for (const std::string& id : ids) {
          if (!contains(runs("shop"), id + " 1 event")) return false;
        }
        return pending() == 0;
      },
      seconds(20)))
      << runs("shop") << w1->log() << w2->log();
}

}  // namespace
}  // namespace relay::testing
