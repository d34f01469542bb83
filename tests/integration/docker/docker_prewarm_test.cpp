// Prewarmed one-shot containers (docs/runtimes.md "Prewarmed containers"): made and started
// ahead, each serves one invocation handed over on its attached stdin and is then removed; the
// stock follows the arrivals and drops to nothing when idle; what a crashed Relay prepared is
// reaped, and a retry finds the container a crashed attempt was handed. These act on Relay's
// containers of the daemon, so they run with the other reaping tests, alone (RUN_SERIAL).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "integration/docker/docker_fixture.h"
#include "support/spawned_process.h"

namespace relay::runtime::testing {
namespace {

using namespace std::chrono_literals;
using relay::testing::SpawnedProcess;

class DockerPrewarm : public DockerFixture {
 protected:
  std::unique_ptr<docker::DockerRuntime> prewarming(
      docker::DockerSettings settings = dockerTestSettings()) {
    return makeDockerTestRuntime(clock_, withPrewarm(std::move(settings), RELAY_TEST_LAUNCHER));
  }
  /// The prewarmed containers `runtime` made that the daemon still has.
  static std::vector<docker::ContainerSummary> prepared(const docker::DockerRuntime& runtime) {
    auto listed =
        runtime.api().listContainers(std::string(docker::kOwnerLabel) + "=" + runtime.owner());
    EXPECT_TRUE(listed.ok());
    std::vector<docker::ContainerSummary> warm;
    for (const auto& container : listed.ok() ? *listed : std::vector<docker::ContainerSummary>{}) {
      if (container.labels.count(std::string(docker::kPrewarmedLabel)) > 0) {
        warm.push_back(container);
      }
    }
    return warm;
  }
};

TEST_F(DockerPrewarm, AContainerServesExactlyOneInvocationAndIsThenRemoved) {
  auto runtime = prewarming();
  ASSERT_NE(runtime, nullptr);
  InvocationSpec spec = script("echo handed $RELAY_MESSAGE_ID; cat");
  prepareWarmContainer(*runtime, spec);
  const auto warm = prepared(*runtime);
  ASSERT_EQ(warm.size(), 1u);
  EXPECT_EQ(warm[0].state, "running");  // started ahead, waiting in relay-launcher
  spec.input = R"({"n":1})";
  const auto first = runtime->run(spec, sink_);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->succeeded) << first->reason;
  EXPECT_EQ(runtime->prewarmedRuns(), 1u);
  EXPECT_EQ(output(spec), "handed " + spec.message_id + "\n{\"n\":1}");
  EXPECT_TRUE(prepared(*runtime).empty()) << "the container that served is removed";
  EXPECT_TRUE(containersOf(spec).empty());
  // Nothing prepared now (no warmer thread here): the next invocation creates its own.
  spec.message_id += "-2";
  const auto second = runtime->run(spec, sink_);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(runtime->prewarmedRuns(), 1u);
}

TEST_F(DockerPrewarm, TheStockFollowsArrivalsAndDropsToNoneWhenIdle) {
  docker::DockerSettings settings = dockerTestSettings();
  settings.prewarm_settings.idle_after = 1500ms;
  auto runtime = prewarming(settings);
  ASSERT_NE(runtime, nullptr);
  const InvocationSpec spec = script("exit 0");
  PrewarmPool& pool = *runtime->prewarmPool();
  (void)pool.take(spec);
  pool.maintain();
  EXPECT_EQ(pool.ready(spec.app), 1u);
  EXPECT_EQ(prepared(*runtime).size(), 1u);
  std::this_thread::sleep_for(1600ms);  // no arrival for longer than idle_after
  pool.maintain();
  EXPECT_EQ(pool.ready(spec.app), 0u);
  EXPECT_TRUE(prepared(*runtime).empty()) << "an idle shape keeps no container";
}

TEST_F(DockerPrewarm, ForgettingTheAppRemovesItsContainers) {
  auto runtime = prewarming();
  ASSERT_NE(runtime, nullptr);
  const InvocationSpec spec = script("exit 0");
  prepareWarmContainer(*runtime, spec);
  ASSERT_EQ(prepared(*runtime).size(), 1u);
  runtime->forget(spec.app);  // its template changed
  EXPECT_TRUE(prepared(*runtime).empty());
}

TEST_F(DockerPrewarm, WhatACrashedRelayPreparedIsReapedAtStart) {
  const InvocationSpec spec = script("exit 0");
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t relay = ::fork();
  if (relay == 0) {
    // A Relay that prepared a container and died without any cleanup.
    ::close(pipe_fds[0]);
    SystemClock clock;
    auto runtime = docker::DockerRuntime::create(
        clock, withPrewarm(dockerTestSettings(), RELAY_TEST_LAUNCHER));
    if (!runtime.ok() || (*runtime)->prewarmPool() == nullptr) ::_exit(2);
    (void)(*runtime)->prewarmPool()->take(spec);
    (*runtime)->prewarmPool()->maintain();
    const std::string owner = (*runtime)->owner();
    (void)!::write(pipe_fds[1], owner.data(), owner.size());
    ::_exit((*runtime)->prewarmPool()->ready(spec.app) == 1 ? 0 : 3);
  }
  ::close(pipe_fds[1]);
  char buffer[512];
  const ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(relay, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_GT(got, 0);
  const std::string owner(buffer, static_cast<std::size_t>(got));
  const auto left = runtime_->api().listContainers(std::string(docker::kOwnerLabel) + "=" + owner);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u) << "the crashed Relay's prewarmed container";
  EXPECT_EQ(left->front().state, "running");
  auto reaped = runtime_->reapStale();
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_GE(*reaped, 1u);
  const auto after = runtime_->api().listContainers(std::string(docker::kOwnerLabel) + "=" + owner);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
}

TEST_F(DockerPrewarm, ARetryRemovesTheContainerAnEarlierAttemptWasHanded) {
  // Attempt 1 runs in a prewarmed container, which carries no invocation label: it was named
  // for the invocation at hand-over, and the retry's look-up finds it by that name.
  auto first_relay = prewarming();
  ASSERT_NE(first_relay, nullptr);
  InvocationSpec spec = script("echo attempt $RELAY_ATTEMPT; sleep 300");
  spec.timeout = 120s;
  prepareWarmContainer(*first_relay, spec);
  CollectingSink first_sink;
  auto first = std::async(std::launch::async, [&] { return first_relay->run(spec, first_sink); });
  // Running the handler: named for the invocation, and the handler has printed.
  std::string handed;
  SpawnedProcess::waitUntil(
      [&] {
        for (const auto& container : containersOf(spec)) {
          if (container.state == "running") handed = container.id;
        }
        return !handed.empty() && first_sink.contains("attempt 1");
      },
      60s);
  ASSERT_FALSE(handed.empty()) << "the prewarmed container was not named for its invocation";
  EXPECT_EQ(first_relay->prewarmedRuns(), 1u);

  spec.attempt = 2;
  spec.timeout = 2s;
  const auto retry = runtime_->run(spec, sink_);  // another replica's retry
  ASSERT_TRUE(retry.ok()) << retry.error().message;
  EXPECT_EQ(retry->reason, "timeout 2s");
  // Attempt 1 lost its container: a charged failure (the kill seen, or the end unobserved),
  // not a run that lasts 300 s.
  const auto lost = first.get();
  ASSERT_TRUE(lost.ok());
  EXPECT_FALSE(lost->succeeded);
  EXPECT_TRUE(lost->reason == "signal 9" ||
              lost->reason.find("lost the handler's container") != std::string::npos)
      << lost->reason;
  EXPECT_NE(first_sink.text("").find("attempt 1"), std::string::npos);
  EXPECT_TRUE(containersOf(spec).empty());
}

}  // namespace
}  // namespace relay::runtime::testing
