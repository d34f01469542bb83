#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/docker/container_config.h"
#include "runtime/docker/container_reaper.h"
#include "runtime/docker/docker_api.h"
#include "runtime/prewarm_pool.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/sandbox_identities.h"

namespace relay::runtime::docker {

/// Settings of the docker runtime; the defaults are the spec's.
struct DockerSettings {
  std::string docker_host = std::string(kDefaultDockerHost);  // DOCKER_HOST
  /// Bound on each Engine API call (create copies the image's files on the vfs driver).
  std::chrono::milliseconds api_timeout{60'000};
  /// Between SIGTERM and SIGKILL on timeout.
  std::chrono::milliseconds kill_grace{2'000};
  std::string tmpfs_options = "rw,noexec,nosuid,size=64m";
  /// Images for apps that name none.
  DefaultImages default_images;
  /// docker-init as PID 1 (see ContainerOptions::init).
  bool init = true;
  /// Secondary failures (a container that could not be removed...). Default: stderr.
  std::function<void(std::string_view)> warn;
  /// Added to timeout + kill_grace + api_timeout for a container's deadline (kDeadlineLabel),
  /// past which any Relay on the host removes it.
  std::chrono::milliseconds deadline_margin{30'000};
  /// How often run() looks for containers past their deadline (left by a crashed Relay).
  std::chrono::milliseconds reap_interval{60'000};
  /// Prewarmed one-shot containers (docs/runtimes.md "Prewarmed containers"); off: every
  /// invocation creates its container when it arrives. Only `relay start` turns it on.
  bool prewarm = false;
  /// A prewarmed container waits at most max_age (then it is replaced): its deadline label
  /// covers that wait plus the longest invocation.
  PrewarmSettings prewarm_settings = [] {
    PrewarmSettings containers;
    containers.max_age = std::chrono::minutes(2);
    return containers;
  }();
  /// relay-launcher, bound into the prewarmed containers of exec apps; empty: the one beside
  /// the running executable. Without it nothing is prewarmed.
  std::string launcher;
  /// The longest timeout a template allows (docs/apps.md): part of a prewarmed container's
  /// deadline, since it learns its invocation's timeout only at hand-over.
  std::chrono::milliseconds max_timeout{300'000};
};

/// Runs each invocation in a fresh container through the Docker Engine API on a unix socket
/// (docs/runtimes.md "docker"): create with the hardening, limits and a deadline label, attach,
/// start, feed stdin, forward output, wait with the timeout, then always remove the container.
/// Once started, a handler's invocation always ends in an Outcome: a lost attach stream, a
/// failed wait or a container that will not die is a failed attempt, never an Error (Runtime).
/// Thread-safe: each API call uses its own connection and the runtime holds no per-invocation
/// state.
class DockerRuntime final : public Runtime {
 public:
  /// Fails (kInvalidArgument) for a DOCKER_HOST that is not `unix:///path`. Does not contact
  /// the daemon: an unreachable one shows in availability() and run().
  static Result<std::unique_ptr<DockerRuntime>> create(Clock& clock, DockerSettings settings = {});

  std::string_view name() const override { return "docker"; }
  /// Blocks for the whole invocation. An Error (kUnavailable...) only when the container never
  /// started: daemon unreachable, image missing, create/attach/start refused, an earlier
  /// attempt's container that could not be removed. It first removes the containers of earlier
  /// attempts of the same invocation (ContainerReaper::reapInvocation) and, every
  /// reap_interval, those past their deadline. A prewarmed container of the app, when one is
  /// ready, is renamed for the invocation and handed it; else one is created for it.
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override;
  /// Removes the app's prewarmed containers.
  void forget(const std::string& app) override;
  /// Checks the app directory and handler file, pings the daemon and looks the image up;
  /// blocks for at most two API calls.
  Availability availability(const InvocationSpec& app_spec) const override;

  /// Removes containers that an earlier Relay process on this host left behind when it
  /// crashed (ContainerReaper::reapStale): those of a process that no longer exists, and any
  /// past its deadline. Call at start, before run(). Returns how many were removed.
  Result<std::size_t> reapStale() override { return reaper_.reapStale(); }
  ContainerReaper& reaper() { return reaper_; }

  /// This instance's value of the `relay.owner` label.
  const std::string& owner() const { return owner_; }
  const DockerApi& api() const { return api_; }
  /// The prewarm pool; null when prewarming is off or relay-launcher was not found.
  PrewarmPool* prewarmPool() const { return prewarm_.get(); }
  /// How many invocations were handed to a prewarmed container.
  std::uint64_t prewarmedRuns() const { return prewarmed_runs_.load(); }

 private:
  DockerRuntime(Clock& clock, DockerSettings settings, DockerApi api, std::string owner,
                std::string hostname);
  Result<std::string> createContainer(const InvocationSpec& spec);
  /// A container of spec's app and shape, started, waiting in relay-launcher (or a warm
  /// interpreter) for its hand-over.
  Result<std::unique_ptr<WarmSandbox>> startWarm(const InvocationSpec& spec);
  /// A fresh name for a container of spec's invocation (invocationNamePrefix).
  std::string containerName(const InvocationSpec& spec);
  /// Attaches, starts and watches a created container.
  Result<Outcome> supervise(const std::string& id, const InvocationSpec& spec, OutputSink& output);
  /// Feeds `input` over `connection`, forwards output and waits, with the timeout from now;
  /// starts the container first unless it runs already (a prewarmed one).
  Result<Outcome> watch(const std::string& id, const InvocationSpec& spec, OutputSink& output,
                        http::HijackedConnection connection, std::string_view input, bool running);
  /// The failed Outcome of a handler that started but whose end Relay could not observe; the
  /// container is killed (best effort) so it cannot run on.
  Outcome failedAfterStart(const std::string& id, const std::string& why, MonoTime started);
  void removeContainer(const std::string& id);

  Clock& clock_;
  DockerSettings settings_;
  DockerApi api_;
  std::string owner_;
  SandboxIdentities identities_;  // each app's uid (docs/runtimes.md "Identities")
  ContainerReaper reaper_;
  std::string launcher_;
  std::atomic<std::uint64_t> prewarmed_runs_{0};
  std::atomic<std::uint64_t> names_{0};
  std::unique_ptr<PrewarmPool> prewarm_;  // last: its warmer uses the members above
};

}  // namespace relay::runtime::docker
