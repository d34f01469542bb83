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

/// A DockerRuntime over dockerTestSettings(). A daemon that does not answer fails the test
/// rather than skipping it: scripts/test starts one.
inline std::unique_ptr<docker::DockerRuntime> makeDockerTestRuntime(
    Clock& clock, docker::DockerSettings settings = dockerTestSettings()) {
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
  return std::move(runtime).value();
}

}  // namespace relay::runtime::testing
