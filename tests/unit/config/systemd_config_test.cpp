#include "config/systemd_config.h"

#include <gtest/gtest.h>

#include <map>

namespace relay::config {
namespace {

using std::chrono::microseconds;

Environment systemdEnv(std::map<std::string, std::string> values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    auto found = values.find(std::string(name));
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

TEST(SystemdConfig, NoNotifySocketIsNoNotifyService) {
  auto config = loadSystemdConfig(systemdEnv({{"WATCHDOG_USEC", "1000"}}), 42);
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->has_value());
}

TEST(SystemdConfig, TheWatchdogIsOursOnlyWhenWatchdogPidIsUnsetOrOurPid) {
  auto ours = loadSystemdConfig(systemdEnv({{"NOTIFY_SOCKET", "/run/systemd/notify"},
                                            {"WATCHDOG_USEC", "30000000"},
                                            {"WATCHDOG_PID", "42"}}),
                                42);
  ASSERT_TRUE(ours.ok() && ours->has_value());
  EXPECT_EQ((*ours)->notify_socket, "/run/systemd/notify");
  EXPECT_EQ((*ours)->watchdog, microseconds(30'000'000));
  auto inherited = loadSystemdConfig(
      systemdEnv(
          {{"NOTIFY_SOCKET", "@notify"}, {"WATCHDOG_USEC", "30000000"}, {"WATCHDOG_PID", "7"}}),
      42);
  ASSERT_TRUE(inherited.ok() && inherited->has_value());
  EXPECT_FALSE((*inherited)->watchdog.has_value());
}

TEST(SystemdConfig, BadValuesNameTheirVariable) {
  auto socket = loadSystemdConfig(systemdEnv({{"NOTIFY_SOCKET", "relative/path"}}), 1);
  ASSERT_FALSE(socket.ok());
  EXPECT_NE(socket.error().message.find("NOTIFY_SOCKET"), std::string::npos);
  auto usec = loadSystemdConfig(systemdEnv({{"NOTIFY_SOCKET", "/n"}, {"WATCHDOG_USEC", "30s"}}), 1);
  ASSERT_FALSE(usec.ok());
  EXPECT_NE(usec.error().message.find("WATCHDOG_USEC"), std::string::npos);
}

}  // namespace
}  // namespace relay::config
