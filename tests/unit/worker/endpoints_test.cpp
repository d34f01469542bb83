// What /healthz and /readyz answer, from the state the worker keeps.
#include "worker/endpoints.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "config/config.h"
#include "fakes/fake_environment.h"

namespace relay::worker {
namespace {

app::AppEntry entry(std::string name, bool loaded) {
  app::AppEntry e;
  e.name = std::move(name);
  e.status.loaded = loaded;
  e.status.available = loaded;
  return e;
}

app::Snapshot snapshotOf(std::vector<app::AppEntry> apps) {
  return app::Snapshot("/apps", std::move(apps), {}, 1);
}

const GroupState kGroupExists{true, true, {}};

TEST(HealthReply, OkWhileRedisAnswered) {
  const auto reply = healthReply(std::nullopt, std::nullopt, "127.0.0.1:6379");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "ok\n");
}

TEST(HealthReply, UnreachableRedisIs503NamingIt) {
  const auto reply = healthReply("unreachable: db:6379: Connection refused", std::nullopt,
                                 "redis://app:***@db:6379");
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(reply.body,
            "unhealthy: redis at redis://app:***@db:6379: unreachable: db:6379: Connection "
            "refused\n");
}

TEST(HealthReply, FailingLifecycleCallsAre503WithTheirReasonBesideTheReaders) {
  const std::string lifecycle = "lifecycle store calls are failing: 3 in a row";
  auto reply = healthReply(std::nullopt, lifecycle, "db:6379");
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(reply.body, "unhealthy: redis at db:6379: " + lifecycle + "\n");
  reply = healthReply("LOADING", lifecycle, "db:6379");
  EXPECT_EQ(reply.body, "unhealthy: redis at db:6379: LOADING; " + lifecycle + "\n");
}

TEST(ReadinessReply, ReadyWithTheGroupAndALoadedApp) {
  const auto reply =
      readinessReply(kGroupExists, snapshotOf({entry("a", true), entry("b", false)}), false);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "ready: 1 apps loaded\n");
}

TEST(ReadinessReply, MissingGroupIsNotReadyWithTheReason) {
  const auto reply = readinessReply({true, false, "consumer group \"relay\" does not exist"},
                                    snapshotOf({entry("a", true)}), false);
  EXPECT_EQ(reply.status, 503);
  EXPECT_NE(reply.body.find("does not exist"), std::string::npos);
}

TEST(ReadinessReply, UncheckedGroupIsNotReady) {
  EXPECT_EQ(readinessReply({}, snapshotOf({entry("a", true)}), false).status, 503);
}

TEST(ReadinessReply, NoLoadedAppIsNotReady) {
  const auto reply = readinessReply(kGroupExists, snapshotOf({entry("broken", false)}), false);
  EXPECT_EQ(reply.status, 503);
  EXPECT_NE(reply.body.find("no app loaded from /apps"), std::string::npos) << reply.body;
}

TEST(ReadinessReply, StoppingIsNotReady) {
  const auto reply = readinessReply(kGroupExists, snapshotOf({entry("a", true)}), true);
  EXPECT_EQ(reply.status, 503);
  EXPECT_NE(reply.body.find("stopping"), std::string::npos);
}

TEST(ReadinessReply, EveryProblemIsListed) {
  const auto reply = readinessReply({true, false, "group gone"}, snapshotOf({}), true);
  EXPECT_EQ(reply.body,
            "not ready: stopping; group gone; no app loaded from /apps (0 app "
            "directories)\n");
}

using relay::testing::environmentOf;

TEST(HttpAddrConfig, DefaultsToLoopback9464) {
  auto config = config::loadConfig(environmentOf({}), {}, "c");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->http_addr, "127.0.0.1:9464");
}

TEST(HttpAddrConfig, AcceptsIpv6AndPortZero) {
  auto config = config::loadConfig(environmentOf({{"RELAY_HTTP_ADDR", "[::]:0"}}), {}, "c");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->http_addr, "[::]:0");
}

TEST(HttpAddrConfig, ABadValueIsAnErrorNamingTheVariable) {
  auto config = config::loadConfig(environmentOf({{"RELAY_HTTP_ADDR", "9464"}}), {}, "c");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(config.error().message.find("RELAY_HTTP_ADDR"), std::string::npos);
  EXPECT_NE(config.error().message.find("expected host:port"), std::string::npos);
}

}  // namespace
}  // namespace relay::worker
