// The Runtime contract on the docker backend (docs/runtimes.md): once a container started,
// every ending is a charged Outcome, never an Error; a container a crashed Relay left running
// is removed before the invocation's retry starts, and by anyone once its deadline passes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>
#include <future>

#include "fakes/fake_clock.h"
#include "integration/docker/docker_fixture.h"
#include "support/spawned_process.h"

namespace relay::runtime::testing {
namespace {

using namespace std::chrono_literals;
using relay::testing::SpawnedProcess;

class DockerAttempts : public DockerFixture {
 protected:
  /// Waits until `spec` has a running container other than `except` and returns its id (""
  /// after a minute).
  std::string runningContainerOf(const InvocationSpec& spec, const std::string& except = {}) {
    std::string id;
    SpawnedProcess::waitUntil(
        [&] {
          for (const auto& container : containersOf(spec)) {
            if (container.state == "running" && container.id != except) id = container.id;
          }
          return !id.empty();
        },
        60s);
    return id;
  }
  /// Runs `spec` (timeout 50 s) and calls `act` with its container once it runs.
  Result<Outcome> runWhileDoing(InvocationSpec spec,
                                const std::function<void(const std::string&)>& act) {
    spec.timeout = 50s;
    auto running = std::async(std::launch::async, [&] { return runtime_->run(spec, sink_); });
    const std::string id = runningContainerOf(spec);
    EXPECT_FALSE(id.empty());
    if (!id.empty()) act(id);
    return running.get();
  }
  /// Runs `spec` in a Relay process that dies (kill -9) once the container runs, without any
  /// cleanup; returns the container left running ("" if it never ran).
  std::string runInACrashingRelay(const InvocationSpec& spec) {
    const pid_t relay = ::fork();
    if (relay == 0) {
      SystemClock clock;
      auto runtime = makeDockerTestRuntime(clock);
      CollectingSink sink;
      (void)runtime->run(spec, sink);
      ::_exit(0);
    }
    if (relay < 0) return {};
    const std::string id = runningContainerOf(spec);
    ::kill(relay, SIGKILL);
    ::waitpid(relay, nullptr, 0);
    return id;
  }
};

TEST_F(DockerAttempts, AContainerKilledFromOutsideMidRunIsAFailedAttemptNotAnError) {
  const InvocationSpec spec = script("echo started; sleep 60");
  const auto outcome = runWhileDoing(
      spec, [&](const std::string& id) { EXPECT_TRUE(runtime_->api().kill(id, "KILL").ok()); });
  ASSERT_TRUE(outcome.ok()) << "charged, so never an Error: " << outcome.error().message;
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_EQ(outcome->reason, "signal 9");
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerAttempts, AContainerRemovedFromOutsideMidRunIsAFailedAttemptNotAnError) {
  // The attach stream ends; the wait either still sees the kill (signal 9) or finds no
  // container at all (the end was not observed): a failed attempt either way.
  const InvocationSpec spec = script("echo started; sleep 60");
  const auto outcome = runWhileDoing(
      spec, [&](const std::string& id) { EXPECT_TRUE(runtime_->api().remove(id).ok()); });
  ASSERT_TRUE(outcome.ok()) << "charged, so never an Error: " << outcome.error().message;
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_TRUE(outcome->reason == "signal 9" ||
              outcome->reason.find("lost the handler's container") != std::string::npos)
      << outcome->reason;
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerAttempts, AContainerOfACrashedRelayIsRemovedOnceItsDeadlinePasses) {
  InvocationSpec spec = script("sleep 300");
  spec.timeout = 5s;
  const std::string id = runInACrashingRelay(spec);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(containersOf(spec).size(), 1U) << "left running by the crash";

  // Another Relay on the host (its clock stands in for the minutes passing).
  relay::testing::FakeClock clock;
  clock.setWall(std::chrono::system_clock::now());
  auto other = makeDockerTestRuntime(clock);
  auto reaped = other->reaper().reapExpired();
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_EQ(containersOf(spec).size(), 1U) << "still inside its deadline";
  // timeout 5s + kill grace 2s + API timeout 30s + margin 30s, and then some.
  clock.advance(2min);
  reaped = other->reaper().reapExpired();
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_GE(*reaped, 1U);
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerAttempts, AnEarlierAttemptACrashedRelayLeftRunningIsRemovedBeforeTheRetry) {
  InvocationSpec spec = script("echo attempt $RELAY_ATTEMPT; sleep 300");
  spec.timeout = 120s;
  // Attempt 1's Relay crashes: its container runs on, with a deadline minutes away.
  const std::string first = runInACrashingRelay(spec);
  ASSERT_FALSE(first.empty());

  // A replica's retry (attempt 2) of the same invocation: the first container is gone before
  // the second one starts, so the two never run at once.
  spec.attempt = 2;
  spec.timeout = 2s;
  auto retry = std::async(std::launch::async, [&] { return runtime_->run(spec, sink_); });
  const std::string second = runningContainerOf(spec, first);
  EXPECT_FALSE(second.empty());
  for (const auto& container : containersOf(spec)) {
    EXPECT_NE(container.id, first) << "attempt 1 still exists next to attempt 2";
  }
  const auto outcome = retry.get();
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->reason, "timeout 2s");
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerAttempts, RunItselfRemovesExpiredContainersBeforeStartingOne) {
  InvocationSpec stale = script("sleep 300");
  stale.message_id += "-stale";
  docker::ContainerOptions options;
  options.image = dockerTestSettings().default_images.exec;
  // Owned by this very process (alive): only the passed deadline makes it stale.
  options.labels = {{std::string(docker::kInvocationLabel), stale.invocationId()},
                    {std::string(docker::kOwnerLabel), runtime_->owner()},
                    {std::string(docker::kDeadlineLabel), "1000"}};
  auto created = runtime_->api().createContainer(docker::containerCreateBody(stale, options));
  ASSERT_TRUE(created.ok()) << created.error().message;
  ASSERT_EQ(containersOf(stale).size(), 1U);
  const Outcome outcome = mustRun(script("exit 0"));
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  EXPECT_TRUE(containersOf(stale).empty());
}

}  // namespace
}  // namespace relay::runtime::testing
