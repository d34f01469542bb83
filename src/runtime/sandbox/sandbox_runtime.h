#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/bwrap_command.h"
#include "runtime/sandbox/cgroup.h"
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
  /// reason (nothing ever runs unconfined). Blocks for one `bwrap --help`.
  static std::unique_ptr<SandboxRuntime> create(Clock& clock, SandboxSettings settings = {});
  /// For tests: a given cgroup layout instead of the host's.
  static std::unique_ptr<SandboxRuntime> create(Clock& clock, SandboxSettings settings,
                                                Result<CgroupLayout> layout);

  std::string_view name() const override { return "sandbox"; }
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override;
  Availability availability(const InvocationSpec& app_spec) const override;

  /// What create() found on this host.
  const SandboxTools& tools() const { return tools_; }
  /// Why the backend cannot run anything on this host; empty when it can.
  const std::string& hostProblem() const { return host_problem_; }
  /// Why `network: true` apps cannot run on this host (no pasta, pasta cannot start); empty
  /// when they can. They are never given the host's network namespace instead.
  const std::string& networkProblem() const { return network_problem_; }
  const CgroupManager* cgroups() const { return cgroups_.get(); }

 private:
  /// Finds pasta and starts one networked probe sandbox; the reason it cannot, or "".
  std::string checkNetwork(Clock& clock);
  SandboxRuntime(Clock& clock, SandboxSettings settings)
      : clock_(clock), settings_(std::move(settings)) {}

  Clock& clock_;
  SandboxSettings settings_;
  SandboxTools tools_;
  std::optional<SeccompFilter> seccomp_;
  std::unique_ptr<CgroupManager> cgroups_;
  std::string host_problem_;
  std::string network_problem_;
};

}  // namespace relay::runtime
