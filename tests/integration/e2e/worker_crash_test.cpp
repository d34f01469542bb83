// kill -9 of a worker process while its handler runs: a second worker reclaims the message and
// completes it; nothing is lost (docs/pipeline.md "Guarantees").
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "fakes/temp_dir.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

TEST(WorkerCrash, ASecondWorkerCompletesTheMessageOfAKilledOne) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  TempDir apps;
  ::chmod(apps.path().c_str(), 0755);
  apps.write("crashy/template.yaml",
             "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
             "    timeout: 2s\n");
  apps.write("crashy/bin/h.sh",
             "#!/bin/sh\necho \"attempt $RELAY_ATTEMPT started\"\n"
             "if [ \"$RELAY_ATTEMPT\" = 1 ]; then sleep 60; fi\n"
             "echo \"attempt $RELAY_ATTEMPT finished\"\n",
             0755);
  ::chmod((apps.path() / "crashy").c_str(), 0755);
  ::chmod((apps.path() / "crashy/bin").c_str(), 0755);
  // The lost attempt counts as a failure and the next waits for the (shortened) backoff.
  const std::vector<std::string> env = {"REDIS_URI=" + (*server)->uri(),
                                        "RELAY_APPS=" + apps.path().string(),
                                        "RELAY_HTTP_ADDR=127.0.0.1:0", "RELAY_TEST_BACKOFF=200ms"};
  auto redis = (*server)->connect();
  const auto pending = [&] {
    auto reply = redis->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  };

  auto first = std::make_unique<SpawnedProcess>(
      std::vector<std::string>{RELAY_TEST_WORKER},
      [&] {
        auto e = env;
        e.push_back("RELAY_CONSUMER=first");
        return e;
      }(),
      (apps.path() / "first.log").string());
  ASSERT_TRUE(first->waitForLog("relay started")) << first->log();
  const std::string id(
      *redis->command({"XADD", "events", "*", "event", R"({"kind":"job"})"})->string());
  ASSERT_TRUE(first->waitForLog("attempt 1 started")) << first->log();
  first->signal(SIGKILL);
  first->wait();
  EXPECT_EQ(pending(), 1);

  SpawnedProcess second(
      {RELAY_TEST_WORKER},
      [&] {
        auto e = env;
        e.push_back("RELAY_CONSUMER=second");
        return e;
      }(),
      (apps.path() / "second.log").string());
  ASSERT_TRUE(second.waitForLog("attempt 2 finished", seconds(30))) << second.log();
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return pending() == 0; }, seconds(10)));
  auto marker = redis->command({"HGET", "relay:events:inv:relay:" + id, "crashy/bin/h.sh"});
  EXPECT_EQ(std::string(*marker->string()).substr(0, 12), "succeeded:2:");
  EXPECT_EQ(second.log().find("attempt 1 started"), std::string::npos);  // never re-ran attempt 1
}

}  // namespace
}  // namespace relay::testing
