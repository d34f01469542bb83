// The runtime settings every command reads the same way: RELAY_RUNTIME / --runtime and
// DOCKER_HOST.
#include "config/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace relay::config {
namespace {

Environment environmentOf(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(std::string(name));
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

TEST(RuntimeConfig, DefaultsToTheSandboxAndTheLocalDockerSocket) {
  const auto config = loadRuntimeConfig(environmentOf({}), "");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->backend, Backend::kSandbox);
  EXPECT_EQ(config->docker_host, "unix:///var/run/docker.sock");
}

TEST(RuntimeConfig, TheFlagOverridesTheVariable) {
  const auto environment =
      environmentOf({{"RELAY_RUNTIME", "docker"}, {"DOCKER_HOST", "unix:///run/d.sock"}});
  EXPECT_EQ(loadRuntimeConfig(environment, "")->backend, Backend::kDocker);
  EXPECT_EQ(loadRuntimeConfig(environment, "process")->backend, Backend::kProcess);
  EXPECT_EQ(loadRuntimeConfig(environment, "process")->docker_host, "unix:///run/d.sock");
}

TEST(RuntimeConfig, AnUnknownBackendNamesTheFlagOrTheVariable) {
  const auto environment = environmentOf({{"RELAY_RUNTIME", "kvm"}});
  const auto from_variable = loadRuntimeConfig(environment, "");
  ASSERT_FALSE(from_variable.ok());
  EXPECT_EQ(from_variable.error().message,
            "RELAY_RUNTIME=\"kvm\": expected sandbox, docker or process");
  const auto from_flag = loadRuntimeConfig(environment, "vm");
  ASSERT_FALSE(from_flag.ok());
  EXPECT_EQ(from_flag.error().message, "--runtime=\"vm\": expected sandbox, docker or process");
  EXPECT_FALSE(loadRuntimeConfig(environmentOf({{"RELAY_RUNTIME", ""}}), "").ok());
}

TEST(RuntimeConfig, AnEmptyDockerHostIsABadValue) {
  const auto config = loadRuntimeConfig(environmentOf({{"DOCKER_HOST", ""}}), "");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message.rfind("DOCKER_HOST=\"\": ", 0), 0u) << config.error().message;
}

TEST(WorkerConfig, ReadsTheRuntimeSettingsLikeEveryCommand) {
  const auto config = loadConfig(
      environmentOf({{"RELAY_RUNTIME", "docker"}, {"DOCKER_HOST", "unix:///run/d.sock"}}),
      ConfigOverrides{}, "host-1");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->runtime.backend, Backend::kDocker);
  EXPECT_EQ(config->runtime.docker_host, "unix:///run/d.sock");
  const auto bad = loadConfig(environmentOf({{"RELAY_RUNTIME", "kvm"}}), ConfigOverrides{}, "h");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "RELAY_RUNTIME=\"kvm\": expected sandbox, docker or process");
}

TEST(Backend, NamesRoundTrip) {
  for (const Backend backend : {Backend::kSandbox, Backend::kDocker, Backend::kProcess}) {
    EXPECT_EQ(backendFromName(backendName(backend)), backend);
  }
  EXPECT_EQ(backendFromName("Sandbox"), std::nullopt);
}

}  // namespace
}  // namespace relay::config
