// `relay console`'s configuration: the worker's variables plus RELAY_CONSOLE_ADDR and
// RELAY_CONSOLE_TOKEN; a token is required off loopback and never echoed.
#include "console/console_config.h"
#include "fakes/fake_environment.h"

#include <gtest/gtest.h>

#include <map>

namespace relay::console {
namespace {

using relay::testing::environmentOf;

TEST(ConsoleConfig, DefaultsToLoopbackPort9465WithoutAToken) {
  auto config = loadConsoleConfig(environmentOf({}), {}, false);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->address.toString(), "127.0.0.1:9465");
  EXPECT_EQ(config->token, "");
  EXPECT_FALSE(config->read_only);
  EXPECT_EQ(config->worker.stream, "events");
}

TEST(ConsoleConfig, TakesTheWorkersConfigurationAndTheFlags) {
  auto config = loadConsoleConfig(
      environmentOf(
          {{"REDIS_STREAM", "orders"}, {"REDIS_GROUP", "g"}, {"RELAY_APPS", "/srv/apps"}}),
      {"/other/apps", "process"}, true);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->worker.stream, "orders");
  EXPECT_EQ(config->worker.group, "g");
  EXPECT_EQ(config->worker.apps, "/other/apps");
  EXPECT_EQ(config->worker.runtime.backend, config::Backend::kProcess);
  EXPECT_TRUE(config->read_only);
}

TEST(ConsoleConfig, ANonLoopbackAddressWithoutATokenIsRefused) {
  auto config =
      loadConsoleConfig(environmentOf({{"RELAY_CONSOLE_ADDR", "0.0.0.0:9465"}}), {}, false);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(config.error().message,
            "RELAY_CONSOLE_ADDR=0.0.0.0:9465 is not a loopback address: set RELAY_CONSOLE_TOKEN "
            "(at least 16 characters) to serve the console there");
}

TEST(ConsoleConfig, ANonLoopbackAddressWithATokenIsServed) {
  auto config = loadConsoleConfig(environmentOf({{"RELAY_CONSOLE_ADDR", "[::]:8080"},
                                                 {"RELAY_CONSOLE_TOKEN", "0123456789abcdefXYZ"}}),
                                  {}, false);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->address.port, 8080);
  EXPECT_EQ(config->token, "0123456789abcdefXYZ");
}

TEST(ConsoleConfig, AShortTokenIsRefusedWithoutEchoingIt) {
  auto config = loadConsoleConfig(environmentOf({{"RELAY_CONSOLE_TOKEN", "hunter2"}}), {}, false);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("RELAY_CONSOLE_TOKEN: too short (7 characters)"),
            std::string::npos);
  EXPECT_EQ(config.error().message.find("hunter2"), std::string::npos);
}

TEST(ConsoleConfig, AMalformedAddressNamesTheVariable) {
  auto config = loadConsoleConfig(environmentOf({{"RELAY_CONSOLE_ADDR", "9465"}}), {}, false);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message.rfind("RELAY_CONSOLE_ADDR: ", 0), 0u);
}

TEST(ConsoleConfig, ABadWorkerVariableStopsItToo) {
  auto config = loadConsoleConfig(environmentOf({{"RELAY_RUNTIME", "vm"}}), {}, false);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("RELAY_RUNTIME"), std::string::npos);
}

TEST(IsLoopbackHost, KnowsTheLoopbackRangesAndLocalhost) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    EXPECT_TRUE(isLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "example.com", "128.0.0.1",
                           "localhost.example.com"}) {
    EXPECT_FALSE(isLoopbackHost(host)) << host;
  }
}

}  // namespace
}  // namespace relay::console
