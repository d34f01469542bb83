#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "runtime/child_process.h"
#include "runtime/docker/docker_api.h"
#include "runtime/image/image_cache.h"
#include "runtime/prewarm_pool.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/bwrap_command.h"
#include "runtime/sandbox/cgroup.h"
#include "runtime/sandbox/native_sandbox.h"
#include "runtime/sandbox/prewarmed_sandbox.h"
#include "runtime/sandbox/seccomp_filter.h"

namespace relay::runtime {

/// Runs each invocation under bubblewrap in fresh pid, mount, ipc, uts, user, cgroup and
/// network namespaces, as an unprivileged uid with no capabilities under a seccomp filter,
/// inside a per-invocation cgroup that enforces the memory, cpu and pids limits and kills the
/// whole tree (docs/runtimes.md).
class SandboxRuntime final : public Runtime {
 public:
  /// Finds bwrap (and what it supports), builds the seccomp filter and prepares cgroups; when
  /// any of them fails the runtime is still created but every app is unavailable with the
  /// reason and the one fix for this host (host_diagnosis.h; nothing ever runs unconfined).
  /// Where a container mounted the cgroup file system read-only, first gives the process a
  /// writable view of its own cgroup (enterWritableCgroupView, which needs the process to have
  /// one thread: call it before starting any). Blocks for one `bwrap --help` and the probes.
  static std::unique_ptr<SandboxRuntime> create(Clock& clock, SandboxSettings settings = {});
  /// For tests: a given cgroup layout instead of the host's. `cgroup_view_problem`: why a
  /// writable view of read-only cgroups could not be made (for the reason given).
  static std::unique_ptr<SandboxRuntime> create(Clock& clock, SandboxSettings settings,
                                                Result<CgroupLayout> layout,
                                                const std::string& cgroup_view_problem = {});

  std::string_view name() const override { return "sandbox"; }
  /// Hands the invocation to a prewarmed sandbox of its app when one is ready, else starts a
  /// sandbox for it; either way one sandbox, one invocation, and the same hand-over. A sandbox
  /// whose set-up failed (bwrap, pasta, or a hand-over its first program refused) never started
  /// the handler: an Error (kUnavailable) with the reason, not an Outcome (docs/runtimes.md
  /// "Set-up failures").
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override;
  Availability availability(const InvocationSpec& app_spec) const override;
  /// Drops the app's prewarmed sandboxes.
  void forget(const std::string& app) override;

  /// Whether the native launcher builds the sandboxes it can (nativeBuilds()); bwrap the rest.
  bool nativeLauncher() const { return native_ != nullptr; }
  /// Which launcher create() chose and why, for `relay doctor` and the start-up log.
  const std::string& launcherChoice() const { return launcher_choice_; }
  /// What create() found on this host.
  const SandboxTools& tools() const { return tools_; }
  /// Why the backend cannot run anything on this host; empty when it can.
  const std::string& hostProblem() const { return host_problem_; }
  /// Why `network: true` apps cannot run on this host (no pasta, pasta cannot start); empty
  /// when they can. They are never given the host's network namespace instead.
  const std::string& networkProblem() const { return network_problem_; }
  const CgroupManager* cgroups() const { return cgroups_.get(); }
  /// The prewarm pool; null when prewarming is off or relay-launcher was not found.
  PrewarmPool* prewarmPool() const { return prewarm_.get(); }
  /// The uid (and gid) the app's sandboxes run as.
  uid_t identityOf(const std::string& app) const { return identities_.of(app); }
  /// How many invocations were handed to a prewarmed sandbox.
  std::uint64_t prewarmedRuns() const { return prewarmed_runs_.load(); }
  /// The image cache, made at the first app with an `image`; an Error when it cannot be.
  Result<image::ImageCache*> images() const;

 private:
  /// Finds pasta and starts one networked probe sandbox; the reason it cannot, or "".
  std::string checkNetwork(Clock& clock);
  /// Prepares the native launcher's tree and runs its self-test as settings_ ask; sets
  /// native_ and launcher_choice_, or host_problem_ when native is forced and cannot be.
  void chooseLauncher(Clock& clock);
  SandboxRuntime(Clock& clock, SandboxSettings settings)
      : clock_(clock), settings_(std::move(settings)), identities_(settings_.ids) {}
  /// Whether spec can run now: the app's files, the interpreter and, for an app with an
  /// `image`, that image's root (unpacked first when new; null without an image).
  Result<std::shared_ptr<const image::ImageRoot>> check(const InvocationSpec& spec) const;
  /// Starts bwrap (with the seccomp program as kSeccompFd and `status_fd` as kStatusFd) running
  /// `command` in `cgroup`, environment `env`, on `image`'s root (the host's when null).
  Result<std::unique_ptr<ChildProcess>> launch(const InvocationSpec& spec,
                                               const InvocationCgroup& cgroup,
                                               const std::vector<std::string>& extra,
                                               std::vector<std::string> command,
                                               std::vector<std::string> env, int status_fd,
                                               const image::ImageRoot* image) const;
  /// A sandbox of spec's shape waiting for its hand-over (relay-launcher or a warm interpreter),
  /// on `root` (from check(); null: the host's), which it holds in use while it lives.
  /// `app_env`: whether an interpreter starts with the app's env (only the cold start of an
  /// app that is not prewarmable()) or without (no app code before the hand-over).
  Result<std::unique_ptr<PrewarmedSandbox>> startWarm(const InvocationSpec& spec,
                                                      std::shared_ptr<const image::ImageRoot> root,
                                                      bool app_env);
  /// Hands the invocation over, forwards output and waits: the invocation's outcome, or an
  /// Error when the handler never started.
  Result<Outcome> supervise(const InvocationSpec& spec, PrewarmedSandbox& sandbox,
                            OutputSink& output);

  Clock& clock_;
  SandboxSettings settings_;
  mutable SandboxIdentities identities_;  // each app's uid, given on first sight
  SandboxTools tools_;
  std::optional<SeccompFilter> seccomp_;
  std::unique_ptr<CgroupManager> cgroups_;
  std::string host_problem_;
  std::string network_problem_;
  std::string launcher_;
  std::unique_ptr<NativeTemplate> native_;  // null: bwrap builds every sandbox
  std::string launcher_choice_;
  std::atomic<std::uint64_t> prewarmed_runs_{0};
  mutable std::mutex images_mutex_;
  mutable std::unique_ptr<docker::DockerApi> daemon_;
  mutable std::unique_ptr<image::ImageCache> images_;
  std::unique_ptr<PrewarmPool> prewarm_;  // last: its warmer uses the members above
};

}  // namespace relay::runtime
