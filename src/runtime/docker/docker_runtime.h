#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/docker/container_config.h"
#include "runtime/docker/container_reaper.h"
#include "runtime/docker/docker_api.h"
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
  /// reap_interval, those past their deadline.
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override;
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

 private:
  DockerRuntime(Clock& clock, DockerSettings settings, DockerApi api, std::string owner,
                std::string hostname);
  Result<std::string> createContainer(const InvocationSpec& spec);
  Result<Outcome> supervise(const std::string& id, const InvocationSpec& spec, OutputSink& output);
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
};

}  // namespace relay::runtime::docker
