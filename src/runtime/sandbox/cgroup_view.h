#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace relay::runtime {

/// One cgroup file system mount of /proc/self/mounts.
struct CgroupMount {
  std::filesystem::path mount_point;
  std::string type;                  // "cgroup" (v1) or "cgroup2"
  std::vector<std::string> options;  // the fourth field, split at commas
  bool readOnly() const;
  /// v1: the controllers (and name=...) the hierarchy carries; v2: none.
  std::vector<std::string> controllers() const;
};

/// The cgroup mounts of a mounts file (`/proc/self/mounts` format), the visible one only where
/// several share a mount point (a later mount shadows an earlier one).
std::vector<CgroupMount> readCgroupMounts(const std::filesystem::path& mounts_file);

/// Whether the hierarchy the sandbox uses (v2 with the memory controller, else v1 memory, pids
/// and cpu) is mounted read-only, as a container's runtime mounts it (Docker, containerd). False
/// when there is none at all (detectCgroupLayout reports that).
bool sandboxCgroupsReadOnly(const std::vector<CgroupMount>& mounts);

/// Where a container mounted the cgroup file system read-only, gives this process writable
/// cgroups of its own, limited to its own subtree (docs/deployment.md "cgroups in a
/// container"): it enters a new user namespace that maps every user and group id to itself (a
/// helper process left in the parent namespace writes the maps, which takes CAP_SETUID,
/// CAP_SETGID and, to map uid 0, CAP_SETFCAP there), then new mount and cgroup namespaces, where it
/// mounts a tmpfs over /sys/fs/cgroup and the same hierarchies again, read-write: rooted at its own
/// cgroup, which the cgroup namespace makes their root. Nothing outside that subtree becomes
/// writable; the process keeps exactly the capabilities it had, over the same ids, and gains none
/// in the namespaces it came from (it cannot bind a port below 1024 any more, for instance).
///
/// Returns false without doing anything when the hierarchy is writable (a host, a systemd
/// service with Delegate=yes) or absent; true once the view is in place; an error naming the
/// refused step (unshare or mount refused by a seccomp profile or AppArmor, no user namespaces)
/// otherwise, the process then unchanged. Must be called while the process has a single thread
/// (the kernel refuses a user namespace to a threaded process); blocks for one short helper.
Result<bool> enterWritableCgroupView(
    const std::filesystem::path& mounts_file = "/proc/self/mounts");

/// v2's "no internal processes" rule: a cgroup that holds processes cannot hand controllers to
/// its children. Moves every process listed in `own/cgroup.procs` into `own/<leaf>` (made when
/// missing), so that `own` may enable them for Relay's sandbox cgroups; a process that exited
/// meanwhile is skipped. Returns how many moved.
Result<int> moveProcessesToLeaf(const std::filesystem::path& own, const std::string& leaf);

}  // namespace relay::runtime
