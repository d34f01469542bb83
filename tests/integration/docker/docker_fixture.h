#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

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
    auto outcome = runtime_->run(spec, sink_);
    EXPECT_TRUE(outcome.ok()) << outcome.error().message;
    return outcome.ok() ? *outcome : Outcome{false, "error", {}};
  }
  std::string output(const InvocationSpec& spec) const {
    return sink_.text("[" + spec.app + "/" + spec.handler + "] ");
  }
  /// Containers still labelled with this invocation (there should be none after run()).
  std::vector<docker::ContainerSummary> containersOf(const InvocationSpec& spec) const {
    auto listed = runtime_->api().listContainers(std::string(docker::kInvocationLabel) + "=" +
                                                 spec.invocationId());
    EXPECT_TRUE(listed.ok()) << listed.error().message;
    return listed.ok() ? *listed : std::vector<docker::ContainerSummary>{};
  }

  SystemClock clock_;
  std::unique_ptr<docker::DockerRuntime> runtime_ = makeDockerTestRuntime(clock_);
  TestApp app_;
  CollectingSink sink_;
};

}  // namespace relay::runtime::testing
