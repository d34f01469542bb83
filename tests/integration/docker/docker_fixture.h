#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/system_clock.h"
#include "integration/docker/docker_test_env.h"
#include "integration/runtime/runtime_harness.h"

namespace relay::runtime::testing {

/// A DockerRuntime on the real daemon, a world-readable app directory and an output collector.
/// Each test gets its own message id, so its containers can be found by label.
class DockerFixture : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(runtime_, nullptr); }

  /// An exec spec for `bin/h.sh` with `body` as its script.
  InvocationSpec script(const std::string& body) {
    app_.script("bin/h.sh", body);
    return spec(Language::kExec, "bin/h.sh");
  }
  InvocationSpec spec(Language language, const std::string& handler) const {
    return app_.spec(language, handler);
  }
  /// Runs `spec`, failing the test on an Error.
  Outcome mustRun(const InvocationSpec& spec) {
    auto outcome = runDockerOnce(*runtime_, spec, sink_);
    EXPECT_TRUE(outcome.ok()) << outcome.error().message;
    return outcome.ok() ? *outcome : Outcome{false, "error", {}};
  }
  std::string output(const InvocationSpec& spec) const {
    return sink_.text("[" + spec.app + "/" + spec.handler + "] ");
  }
  /// Containers of this invocation, labelled or named for it (a prewarmed one is named at
  /// hand-over): there should be none after run().
  std::vector<docker::ContainerSummary> containersOf(const InvocationSpec& spec) const {
    auto listed = runtime_->api().listContainers(std::string(docker::kInvocationLabel) + "=" +
                                                 spec.invocationId());
    EXPECT_TRUE(listed.ok()) << listed.error().message;
    auto named =
        runtime_->api().listContainersNamed(docker::invocationNamePrefix(spec.invocationId()));
    EXPECT_TRUE(named.ok()) << named.error().message;
    std::vector<docker::ContainerSummary> all =
        listed.ok() ? *listed : std::vector<docker::ContainerSummary>{};
    for (const auto& container : named.ok() ? *named : std::vector<docker::ContainerSummary>{}) {
      const bool seen = std::any_of(all.begin(), all.end(),
                                    [&](const auto& other) { return other.id == container.id; });
      if (!seen) all.push_back(container);
    }
    return all;
  }

  SystemClock clock_;
  std::unique_ptr<docker::DockerRuntime> runtime_ = makeDockerTestRuntime(clock_);
  TestApp app_;
  CollectingSink sink_;
};

}  // namespace relay::runtime::testing
