#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "common/clock.h"
#include "config/config.h"
#include "runtime/docker/docker_runtime.h"

namespace relay::runtime::testing {

/// `value of variable`, or `fallback` when unset or empty.
inline std::string environmentOr(const char* variable, const char* fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : fallback;
}

/// The docker tests' settings: the daemon on DOCKER_HOST and, as the per-language defaults, the
/// images scripts/lib/dockerd.sh builds offline (no registry is reachable).
inline docker::DockerSettings dockerTestSettings() {
  docker::DockerSettings settings;
  // DOCKER_HOST as `relay start` reads it (the default socket when unset).
  if (const auto runtime = config::loadRuntimeConfig(config::processEnvironment(), "docker")) {
    settings.docker_host = runtime->docker_host;
  }
  settings.default_images.exec =
      environmentOr("RELAY_TEST_DOCKER_EXEC_IMAGE", "relay-test/exec:latest");
  settings.default_images.python3 =
      environmentOr("RELAY_TEST_DOCKER_PYTHON3_IMAGE", "relay-test/python3:latest");
  settings.default_images.node =
      environmentOr("RELAY_TEST_DOCKER_NODE_IMAGE", "relay-test/node:latest");
  settings.api_timeout = std::chrono::seconds(30);
  return settings;
}

/// The prewarmed build (RELAY_TEST_PREWARMED_DOCKER): every invocation the suites run is handed
/// to a container prepared for it (docs/runtimes.md "Prewarmed containers").
inline constexpr bool kPrewarmedDockerBuild =
#if defined(RELAY_TEST_PREWARMED_DOCKER)
    true;
#else
    false;
#endif

/// `settings` with prewarmed containers on: the built relay-launcher, no background warmer
/// (runDockerOnce() prepares each container).
inline docker::DockerSettings withPrewarm(docker::DockerSettings settings, std::string launcher) {
  settings.prewarm = true;
  settings.launcher = std::move(launcher);
  settings.prewarm_settings.background = false;
  return settings;
}

/// A DockerRuntime over dockerTestSettings() (prewarming in the prewarmed build). A daemon that
/// does not answer fails the test rather than skipping it: scripts/test starts one.
inline std::unique_ptr<docker::DockerRuntime> makeDockerTestRuntime(
    Clock& clock, docker::DockerSettings settings = dockerTestSettings()) {
#if defined(RELAY_TEST_PREWARMED_DOCKER)
  settings = withPrewarm(std::move(settings), RELAY_TEST_LAUNCHER);
#endif
  auto runtime = docker::DockerRuntime::create(clock, std::move(settings));
  if (!runtime.ok()) {
    ADD_FAILURE() << runtime.error().message;
    return nullptr;
  }
  if (auto ping = (*runtime)->api().ping(); !ping.ok()) {
    ADD_FAILURE() << ping.error().message
                  << " (scripts/test starts dockerd and builds the test images; see "
                     "scripts/lib/dockerd.sh)";
  }
  if (kPrewarmedDockerBuild && (*runtime)->prewarmPool() == nullptr) {
    ADD_FAILURE() << "relay-launcher not found: nothing is prewarmed";
  }
  return std::move(runtime).value();
}

/// Makes the pool keep one container of spec's app and shape ready, now.
inline void prepareWarmContainer(docker::DockerRuntime& runtime, const InvocationSpec& spec) {
  PrewarmPool* pool = runtime.prewarmPool();
  ASSERT_NE(pool, nullptr);
  (void)pool->take(spec);  // an arrival: the shape's target is one
  pool->maintain();
  ASSERT_GE(pool->ready(spec.app), 1u) << "no container could be prepared";
}

/// Runs `spec`: as it comes outside the prewarmed build; in it, on a container prepared for it
/// just before, checking that the run took it. What cannot run at all is refused before any
/// container is involved, as on a cold start.
inline Result<Outcome> runDockerOnce(docker::DockerRuntime& runtime, const InvocationSpec& spec,
                                     OutputSink& output) {
  if (!kPrewarmedDockerBuild || !runtime.availability(spec).available) {
    return runtime.run(spec, output);
  }
  prepareWarmContainer(runtime, spec);
  const std::uint64_t before = runtime.prewarmedRuns();
  auto outcome = runtime.run(spec, output);
  EXPECT_EQ(runtime.prewarmedRuns(), before + 1) << "the run created its container";
  return outcome;
}

}  // namespace relay::runtime::testing
