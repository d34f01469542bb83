// The real `relay` binary, end to end: example apps on the sandbox runtime, events published
// with redis-cli, a real redis-server.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include "fakes/temp_dir.h"
#include "invocation/keys.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

class RelayStart : public RedisTest {
 protected:
  long long pending() {
    auto connection = server().connect();
    auto reply = connection->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  }
  void publish(const std::string& json) {
    const std::string command = "redis-cli -p " + std::to_string(server().port()) +
                                " XADD events '*' event '" + json + "' >/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  TempDir logs_;
};

TEST_F(RelayStart, RunsTheMatchingHandlersOfPublishedEventsAndAcksThem) {
  SpawnedProcess relay(
      {RELAY_BINARY, "start", "--apps", RELAY_EXAMPLES_DIR "/apps", "--runtime", "sandbox"},
      {"REDIS_URI=" + server().uri(), "RELAY_CONSUMER=e2e", "RELAY_HTTP_ADDR=127.0.0.1:0"},
      (logs_.path() / "relay.log").string());
  ASSERT_TRUE(relay.waitForLog("relay started")) << relay.log();
  publish(
      R"({"event_name":"INSERT","table_name":"users","new_image":{"id":"user_7","email":"e2e@example.com"}})");
  publish(
      R"({"event_name":"INSERT","table_name":"orders","new_image":{"id":"ord_9","amount":5000}})");
  publish(R"({"event_name":"INSERT","table_name":"nothing-listens"})");
  publish("this is not json");
  ASSERT_TRUE(relay.waitForLog("[users/handlers.users.on_change] ")) << relay.log();
  ASSERT_TRUE(relay.waitForLog("[orders/handlers.orders.onLargeOrder] ")) << relay.log();
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return pending() == 0; }, seconds(30)))
      << relay.log();
  // Logged once the script that wrote the DLQ entry and acknowledged returned: the test may
  // see nothing pending first.
  EXPECT_TRUE(relay.waitForLog("malformed message dead-lettered")) << relay.log();
  relay.signal(SIGTERM);
  const int status = relay.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(relay.log().find("relay stopped"), std::string::npos);
}

TEST_F(RelayStart, BadConfigurationStopsWithAOneLineErrorBeforeTouchingRedis) {
  SpawnedProcess relay(
      {RELAY_BINARY, "start", "--apps", RELAY_EXAMPLES_DIR "/apps"},
      {"REDIS_URI=" + server().uri(), "MAX_CONCURRENCY=lots", "RELAY_HTTP_ADDR=127.0.0.1:0"},
      (logs_.path() / "relay.log").string());
  const int status = relay.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string log = relay.log();
  EXPECT_NE(log.find("MAX_CONCURRENCY"), std::string::npos) << log;
  EXPECT_EQ(log.find('\n'), log.size() - 1) << "one line: " << log;
  auto connection = server().connect();
  EXPECT_EQ(*connection->command({"EXISTS", "events"})->integer(), 0);  // no group created
}

TEST_F(RelayStart, PasswordInRedisUriIsNeverLogged) {
  auto admin = server().connect();
  const auto created =
      admin->command({"ACL", "SETUSER", "relay", "on", ">s3cr3t-pw", "~*", "&*", "+@all"});
  ASSERT_TRUE(created && created->status()) << "the server knows the user relay logs in as";
  SpawnedProcess relay(
      {RELAY_BINARY, "start", "--apps", RELAY_EXAMPLES_DIR "/apps"},
      {"REDIS_URI=redis://relay:s3cr3t-pw@127.0.0.1:" + std::to_string(server().port()),
       "RELAY_RUNTIME=process", "RELAY_HTTP_ADDR=127.0.0.1:0"},
      (logs_.path() / "relay.log").string());
  ASSERT_TRUE(relay.waitForLog("relay started")) << relay.log();
  relay.signal(SIGTERM);
  relay.wait();
  EXPECT_EQ(relay.log().find("s3cr3t-pw"), std::string::npos) << relay.log();
  EXPECT_NE(relay.log().find("WITHOUT isolation"), std::string::npos);
}

TEST_F(RelayStart, AnAppWhoseImageIsMissingLeavesItsMessagesPendingUncharged) {
  // An image that is missing (an OCI layout directory that is not there: no daemon needed) goes
  // down the usual path (docs/runtimes.md "Image roots"): unavailable with the reason, the
  // message parked, never run, never charged, never dead-lettered.
  TempDir apps;
  ::chmod(apps.path().c_str(), 0755);
  const std::string image = "oci:" + (apps.path() / "no-such-layout").string();
  apps.write("pinned/template.yaml", "runtime: exec\nimage: " + image +
                                         "\nevents:\n  - handler: bin/h.sh\n"
                                         "    pattern: {kind: [go]}\n");
  apps.write("pinned/bin/h.sh", "#!/bin/sh\necho ran\n");
  ::chmod((apps.path() / "pinned/bin/h.sh").c_str(), 0755);
  SpawnedProcess relay(
      {RELAY_BINARY, "start", "--apps", apps.path().string(), "--runtime", "sandbox"},
      {"REDIS_URI=" + server().uri(), "RELAY_CONSUMER=e2e", "RELAY_HTTP_ADDR=127.0.0.1:0",
       "RELAY_IMAGE_CACHE=" + (logs_.path() / "images").string()},
      (logs_.path() / "relay.log").string());
  ASSERT_TRUE(relay.waitForLog("relay started")) << relay.log();
  publish(R"({"kind":"go"})");
  ASSERT_TRUE(relay.waitForLog("app unavailable here")) << relay.log();
  EXPECT_NE(relay.log().find("no-such-layout"), std::string::npos) << "the reason names it";
  EXPECT_EQ(pending(), 1);
  auto connection = server().connect();
  // No attempt was charged: the message's state holds its plan and nothing of the handler
  // (docs/pipeline.md "State in Redis").
  const auto range = connection->command({"XRANGE", "events", "-", "+"});
  ASSERT_TRUE(range.ok() && range->size() == 1);
  const std::string id(*(*(*range->at(0)).at(0)).string());
  const auto charged = connection->command(
      {"HGET", invocation::StreamKeys{"events", "relay"}.state(id), "pinned/bin/h.sh"});
  ASSERT_TRUE(charged.ok());
  EXPECT_TRUE(charged->isNil()) << "an attempt was recorded";
  relay.signal(SIGTERM);
  EXPECT_EQ(WEXITSTATUS(relay.wait()), 0);
  EXPECT_EQ(relay.log().find("[pinned/bin/h.sh] ran"), std::string::npos) << relay.log();
  EXPECT_EQ(relay.log().find("dead-letter"), std::string::npos) << relay.log();
  EXPECT_EQ(pending(), 1) << "still there for a worker that can run it";
}

}  // namespace
}  // namespace relay::testing
