#pragma once

#include <filesystem>
#include <string>

#include "common/result.h"

namespace relay::runtime {

// What the sandbox needs from its host, layer by layer, each with the one change that makes
// it work there (docs/deployment.md "What each failure looks like"). `relay doctor` runs each
// check; the sandbox runtime names the fix in its unavailability reason. A container is told
// the container option, a host the sysctl or the unit setting.

/// Facts about the host that pick the fix. read() takes them from /proc, /sys and the files a
/// container runtime leaves (/.dockerenv, /run/.containerenv, KUBERNETES_SERVICE_HOST).
struct HostFacts {
  bool in_container = false;
  bool in_kubernetes = false;
  bool seccomp_filtered = false;          // /proc/self/status Seccomp: 2
  bool apparmor_confined = false;         // /proc/self/attr/current names a profile, not unconfined
  std::string unprivileged_userns_clone;  // kernel.unprivileged_userns_clone ("" when absent)
  std::string max_user_namespaces;        // user.max_user_namespaces
  std::string apparmor_restrict_userns;   // kernel.apparmor_restrict_unprivileged_userns
  bool under_systemd = false;             // INVOCATION_ID set: a systemd service
  static HostFacts read();
};

/// One layer's verdict: ok, or the problem and its fix.
struct LayerCheck {
  bool ok = false;
  std::string detail;  // what was found (either way)
  std::string fix;     // the change that makes it work; empty when ok
};

/// Whether uid 65534 (the sandbox user) can create a user namespace, as bwrap does: a child
/// drops to the user and unshares. The fix names the sysctl, the seccomp profile or AppArmor,
/// whichever refuses.
LayerCheck checkUserNamespaces(const HostFacts& facts);
/// Whether a fresh /proc can be mounted in a new user and pid namespace, as bwrap does: refused
/// where /proc is masked (a container's default) or overmounted (systemd's ProtectKernel*).
LayerCheck checkProcMount(const HostFacts& facts);
/// Whether the cgroup hierarchy is there and writable, directly or through the private view
/// Relay makes in a container (cgroup_view.h, tried in a child process).
LayerCheck checkCgroups(const HostFacts& facts);
/// Whether /dev/net/tun exists and the sandbox user may open it (pasta, for network: true).
LayerCheck checkTunDevice(const HostFacts& facts);

/// The fix for a sandbox probe that failed with bwrap's (or pasta's) `message`, from the layer
/// the message names; empty when it names none Relay knows.
std::string fixForSandboxFailure(const std::string& message, const HostFacts& facts);
/// The fix for cgroups that are read-only and could not be made writable (`why`).
std::string fixForReadOnlyCgroups(const std::string& why, const HostFacts& facts);

/// Tries enterWritableCgroupView() in a child process and makes and removes one cgroup there:
/// whether Relay would get writable cgroups in this container, without changing this process.
/// Blocks for the child. Call before starting threads that may hold locks across a fork.
Status probeCgroupView();

}  // namespace relay::runtime
