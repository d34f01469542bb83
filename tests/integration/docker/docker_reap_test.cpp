// Reaping what a crashed Relay left (docs/runtimes.md "docker"): these act on every Relay
// container of the daemon whose owner is dead, so they run alone (RUN_SERIAL): two of them side
// by side removed each other's leftovers and miscounted.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "config/runtime_factory.h"
#include "integration/docker/docker_fixture.h"
#include "runtime/docker/container_config.h"

namespace relay::runtime::testing {
namespace {

class DockerReaping : public DockerFixture {};

// Creates a stopped container carrying `owner` as its relay.owner label, as a crashed Relay
// would leave behind.
std::string leaveContainer(const docker::DockerRuntime& runtime, const InvocationSpec& spec,
                           const std::string& owner) {
  docker::ContainerOptions options;
  options.image = dockerTestSettings().default_images.exec;
  options.labels = {{std::string(docker::kAppLabel), spec.app},
                    {std::string(docker::kInvocationLabel), spec.invocationId()},
                    {std::string(docker::kOwnerLabel), owner}};
  auto id = runtime.api().createContainer(docker::containerCreateBody(spec, options));
  EXPECT_TRUE(id.ok()) << id.error().message;
  return id.ok() ? *id : std::string();
}

pid_t deadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

TEST_F(DockerReaping, ReapStaleRemovesLeftoversOfADeadRelayOnThisHostOnly) {
  const std::string own = runtime_->owner();
  const std::string host = own.substr(0, own.find('/'));
  InvocationSpec dead = script("exit 0");
  InvocationSpec restarted = spec(Language::kExec, "bin/h.sh");
  restarted.message_id += "-restarted";
  InvocationSpec alive = spec(Language::kExec, "bin/h.sh");
  alive.message_id += "-alive";
  InvocationSpec elsewhere = spec(Language::kExec, "bin/h.sh");
  elsewhere.message_id += "-elsewhere";

  leaveContainer(*runtime_, dead, host + "/" + std::to_string(deadPid()) + "/1");
  // The same pid as ours with another start time: an earlier incarnation (PID 1 restarted).
  leaveContainer(*runtime_, restarted, host + "/" + std::to_string(::getpid()) + "/1");
  const std::string alive_id =
      leaveContainer(*runtime_, alive, host + "/" + std::to_string(::getppid()) + "/1");
  const std::string elsewhere_id = leaveContainer(*runtime_, elsewhere, "other-host/1/1");

  const auto reaped = runtime_->reapStale();
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_GE(*reaped, 2u);
  EXPECT_TRUE(containersOf(dead).empty());
  EXPECT_TRUE(containersOf(restarted).empty());
  EXPECT_EQ(containersOf(alive).size(), 1u);  // a live process may be another Relay
  EXPECT_EQ(containersOf(elsewhere).size(), 1u);
  EXPECT_TRUE(runtime_->api().remove(alive_id).ok());
  EXPECT_TRUE(runtime_->api().remove(elsewhere_id).ok());
}

TEST_F(DockerReaping, BuildingTheBackendRemovesNothingOnlyAnExplicitReapDoes) {
  const std::string own = runtime_->owner();
  const InvocationSpec dead = script("exit 0");
  leaveContainer(*runtime_, dead,
                 own.substr(0, own.find('/')) + "/" + std::to_string(deadPid()) + "/1");
  // What `relay app ls --runtime docker` builds: the backend, then an availability check.
  auto backend =
      config::makeRuntime(config::Backend::kDocker, clock_, dockerTestSettings().docker_host);
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  (void)(*backend)->availability(dead);
  EXPECT_EQ(containersOf(dead).size(), 1u);
  // What `relay start` does once it has built the backend.
  const auto reaped = (*backend)->reapStale();
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_GE(*reaped, 1u);
  EXPECT_TRUE(containersOf(dead).empty());
}

}  // namespace
}  // namespace relay::runtime::testing
