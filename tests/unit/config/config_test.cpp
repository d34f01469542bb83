// The settings every command reads the same way as `relay start`: RELAY_RUNTIME / --runtime,
// DOCKER_HOST and RELAY_APPS / --apps.
#include "config/config.h"
#include "fakes/fake_environment.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace relay::config {
namespace {

using relay::testing::environmentOf;

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

TEST(RuntimeConfig, ReadsTheImageCacheAndRefusesARelativeDirOrATinySize) {
  const auto defaults = loadRuntimeConfig(environmentOf({}), "");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->image_cache, "/var/cache/relay/images");
  EXPECT_EQ(defaults->image_cache_bytes, 10ULL << 30);
  const auto set = loadRuntimeConfig(
      environmentOf({{"RELAY_IMAGE_CACHE", "/srv/images"}, {"RELAY_IMAGE_CACHE_SIZE", "2GiB"}}),
      "");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->image_cache, "/srv/images");
  EXPECT_EQ(set->image_cache_bytes, 2ULL << 30);
  const auto relative = loadRuntimeConfig(environmentOf({{"RELAY_IMAGE_CACHE", "images"}}), "");
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.error().message,
            "RELAY_IMAGE_CACHE=\"images\": expected an absolute directory path");
  const auto tiny = loadRuntimeConfig(environmentOf({{"RELAY_IMAGE_CACHE_SIZE", "1MiB"}}), "");
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message.rfind("RELAY_IMAGE_CACHE_SIZE=\"1MiB\": ", 0), 0u);
}

TEST(RuntimeConfig, ReadsWhichLauncherBuildsTheSandboxes) {
  const auto defaults = loadRuntimeConfig(environmentOf({}), "");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->sandbox_launcher, runtime::SandboxLauncher::kAuto);
  for (const auto& [name, launcher] : {std::pair{"auto", runtime::SandboxLauncher::kAuto},
                                       std::pair{"native", runtime::SandboxLauncher::kNative},
                                       std::pair{"bwrap", runtime::SandboxLauncher::kBwrap}}) {
    const auto set = loadRuntimeConfig(environmentOf({{"RELAY_SANDBOX_LAUNCHER", name}}), "");
    ASSERT_TRUE(set.ok()) << set.error().message;
    EXPECT_EQ(set->sandbox_launcher, launcher) << name;
  }
  const auto bad = loadRuntimeConfig(environmentOf({{"RELAY_SANDBOX_LAUNCHER", "runc"}}), "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "RELAY_SANDBOX_LAUNCHER=\"runc\": expected auto, native or bwrap");
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

// docs/replay.md "Archive": the stream's archive, off unless RELAY_ARCHIVE_RETENTION is set.
TEST(WorkerConfig, ReadsTheStreamArchiveAndRefusesAPatternWithoutARetention) {
  const auto none = loadConfig(environmentOf({}), ConfigOverrides{}, "h");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->archive_retention.count(), 0);
  EXPECT_TRUE(none->archive_pattern_file.empty());
  const auto set = loadConfig(environmentOf({{"RELAY_ARCHIVE_RETENTION", "30d"},
                                             {"RELAY_ARCHIVE_PATTERN_FILE", "/etc/relay/a.yaml"}}),
                              ConfigOverrides{}, "h");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->archive_retention, std::chrono::hours(24 * 30));
  EXPECT_EQ(set->archive_pattern_file, "/etc/relay/a.yaml");
  const auto long_one =
      loadConfig(environmentOf({{"RELAY_ARCHIVE_RETENTION", "400d"}}), ConfigOverrides{}, "h");
  ASSERT_FALSE(long_one.ok());
  EXPECT_EQ(long_one.error().message,
            "RELAY_ARCHIVE_RETENTION=\"400d\": expected a duration up to 366d like 30d, or 0 for "
            "no stream archive");
  const auto alone = loadConfig(environmentOf({{"RELAY_ARCHIVE_PATTERN_FILE", "/a.yaml"}}),
                                ConfigOverrides{}, "h");
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.error().message.rfind("RELAY_ARCHIVE_PATTERN_FILE=\"/a.yaml\": set "
                                        "RELAY_ARCHIVE_RETENTION too",
                                        0),
            0u)
      << alone.error().message;
}

TEST(AppsRootSetting, TheFlagOverridesTheVariableWhichOverridesTheDefault) {
  const auto environment = environmentOf({{"RELAY_APPS", "/srv/apps"}});
  EXPECT_EQ(*loadAppsRoot(environment, "/opt/apps"), "/opt/apps");
  EXPECT_EQ(*loadAppsRoot(environment, ""), "/srv/apps");
  EXPECT_EQ(*loadAppsRoot(environmentOf({}), ""), "/apps");
}

TEST(AppsRootSetting, AnEmptyRelayAppsIsABadValueForEveryCommand) {
  const auto root = loadAppsRoot(environmentOf({{"RELAY_APPS", ""}}), "");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message, "RELAY_APPS: expected a directory");
  // `relay start` reads it through the same loader and says the same.
  const auto config = loadConfig(environmentOf({{"RELAY_APPS", ""}}), ConfigOverrides{}, "h");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message, "RELAY_APPS: expected a directory");
  // A flag names the root itself: the variable is not read.
  EXPECT_EQ(*loadAppsRoot(environmentOf({{"RELAY_APPS", ""}}), "/opt/apps"), "/opt/apps");
}

TEST(Backend, NamesRoundTrip) {
  for (const Backend backend : {Backend::kSandbox, Backend::kDocker, Backend::kProcess}) {
    EXPECT_EQ(backendFromName(backendName(backend)), backend);
  }
  EXPECT_EQ(backendFromName("Sandbox"), std::nullopt);
}

}  // namespace
}  // namespace relay::config
