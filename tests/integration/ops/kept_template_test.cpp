// docs/apps.md "Loaded, available, and reloads": the real `relay start` started while Redis is
// down with an invalid template whose last valid version Redis keeps. Once Redis is back the
// worker fetches the kept template, so the other apps' events run and the broken app's wait as
// matched, instead of every event staying unclassified until the app's files change. Process
// runtime, exec handlers in a temp apps root, a real redis-server stopped and started again
// from its RDB file.
#include <gtest/gtest.h>

#include "fakes/temp_dir.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

constexpr const char* kShop = R"(runtime: exec
events:
  - handler: bin/shop.sh
    pattern: {kind: [order]}
)";
constexpr const char* kOther = R"(runtime: exec
events:
  - handler: bin/other.sh
    pattern: {kind: [other]}
)";

class KeptTemplate : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    apps_.write("shop/template.yaml", kShop);
    apps_.write("shop/bin/shop.sh", "#!/bin/sh\necho \"shop ran $RELAY_MESSAGE_ID\"\n", 0755);
    apps_.write("other/template.yaml", kOther);
    apps_.write("other/bin/other.sh", "#!/bin/sh\necho \"other ran $RELAY_MESSAGE_ID\"\n", 0755);
  }
  std::unique_ptr<SpawnedProcess> start(const std::string& name) {
    return std::make_unique<SpawnedProcess>(
        std::vector<std::string>{RELAY_BINARY, "start"},
        std::vector<std::string>{"REDIS_URI=" + server().uri(),
                                 "RELAY_APPS=" + apps_.path().string(), "RELAY_RUNTIME=process",
                                 "RELAY_HTTP_ADDR=127.0.0.1:0", "RELAY_CONSUMER=" + name},
        (logs_.path() / (name + ".log")).string());
  }
  std::string xadd(const std::string& event) {
    auto redis = server().connect();
    return std::string(*redis->command({"XADD", "events", "*", "event", event})->string());
  }
  long long pending() {
    auto redis = server().connect();
    auto reply = redis->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  }

  TempDir apps_;
  TempDir logs_;
};

TEST_F(KeptTemplate, AWorkerStartedWhileRedisIsDownFetchesTheKeptTemplateWhenRedisReturns) {
  {
    // A first worker loads shop's valid template and keeps it in Redis.
    auto first = start("first");
    ASSERT_TRUE(first->waitForLog("relay started")) << first->log();
    first->signal(SIGTERM);
    ASSERT_NE(first->wait(), -1) << first->log();
  }
  auto redis = server().connect();
  ASSERT_TRUE(redis->command({"SAVE"}).ok());  // the kept template survives the restart
  redis.reset();
  ASSERT_TRUE(server().stop().ok());
  apps_.write("shop/template.yaml", "runtime: exec\nevents: [oops\n");  // a broken deploy
  auto worker = start("second");
  ASSERT_TRUE(worker->waitForLog("relay started")) << worker->log();
  ASSERT_TRUE(worker->waitForLog("cannot reach redis for the kept app templates")) << worker->log();
  ASSERT_TRUE(server().start().ok());
  const std::string other = xadd(R"({"kind":"other"})");
  const std::string order = xadd(R"({"kind":"order"})");
  xadd(R"({"kind":"nothing"})");
  EXPECT_TRUE(worker->waitForLog("other ran " + other, seconds(30))) << worker->log();
  // The broken app's order waits as a matched message of an unavailable app, uncharged.
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return pending() == 1; }, seconds(30)))
      << worker->log();
  EXPECT_EQ(worker->log().find("shop ran"), std::string::npos);
  EXPECT_TRUE(worker->waitForLog("app unavailable here: message parked")) << worker->log();
  EXPECT_NE(worker->log().find("using the last valid template kept in redis"), std::string::npos);
  (void)order;
  worker->signal(SIGTERM);
  EXPECT_NE(worker->wait(), -1);
}

}  // namespace
}  // namespace relay::testing
