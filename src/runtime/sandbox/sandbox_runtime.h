#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/cgroup.h"

namespace relay::runtime {

/// Settings of the bubblewrap sandbox; the defaults are the secure ones.
struct SandboxSettings {
  std::string search_path = "/usr/local/bin:/usr/bin:/bin";  // where bwrap is found
  uid_t uid = 65534;  // nobody, outside and inside the sandbox
  gid_t gid = 65534;
  std::uint64_t tmp_bytes = 64ULL << 20;  // size of the private /tmp
  std::string cgroup_base_name = "relay-sandbox";
  /// How many invocations may run at once (MAX_CONCURRENCY): the sandboxes together get the
  /// CPU weight of that many ordinary processes.
  int cpu_slots = CgroupManager::kDefaultCpuSlots;
  /// Host paths exposed read-only when present; never /root, /home or Relay's own files.
  std::vector<std::string> system_paths = {"/usr",
                                           "/etc/ssl",
                                           "/etc/ca-certificates",
                                           "/etc/alternatives",
                                           "/etc/ld.so.cache",
                                           "/etc/localtime",
                                           "/etc/nsswitch.conf",
                                           "/etc/mime.types"};
};

/// Runs each invocation under bubblewrap in fresh pid, mount, ipc, uts, user, cgroup and
/// network namespaces, as an unprivileged uid with no capabilities, inside a per-invocation
/// cgroup that enforces the memory, cpu and pids limits and kills the whole tree.
class SandboxRuntime final : public Runtime {
 public:
  /// Finds bwrap and prepares cgroups; when either is missing the runtime is still created but
  /// every app is unavailable with the reason (nothing ever runs unconfined).
  static std::unique_ptr<SandboxRuntime> create(Clock& clock, SandboxSettings settings = {});
  /// For tests: a given cgroup layout instead of the host's.
  static std::unique_ptr<SandboxRuntime> create(Clock& clock, SandboxSettings settings,
                                                Result<CgroupLayout> layout);

  std::string_view name() const override { return "sandbox"; }
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override;
  Availability availability(const InvocationSpec& app_spec) const override;

  /// The complete bwrap argv for an invocation (exposed for tests).
  std::vector<std::string> bwrapArgv(const InvocationSpec& spec) const;
  /// Why the backend cannot run anything on this host; empty when it can.
  const std::string& hostProblem() const { return host_problem_; }
  const CgroupManager* cgroups() const { return cgroups_.get(); }

 private:
  SandboxRuntime(Clock& clock, SandboxSettings settings)
      : clock_(clock), settings_(std::move(settings)) {}

  Clock& clock_;
  SandboxSettings settings_;
  std::string bwrap_;
  std::unique_ptr<CgroupManager> cgroups_;
  std::string host_problem_;
};

}  // namespace relay::runtime
