#pragma once

#include <sys/types.h>

namespace relay::runtime {

/// How cloneVm started the child.
struct VmClone {
  pid_t pid = -1;          // -1: failed, errno set
  bool in_cgroup = false;  // the child started inside the requested cgroup (CLONE_INTO_CGROUP)
};

/// Starts `child(arg)` in a new process that shares the caller's memory until it execs or exits
/// (clone with CLONE_VM | CLONE_VFORK on a dedicated stack; the child's exit signal is
/// SIGCHLD): nothing of the caller's address space is copied and no page of it is made
/// copy-on-write, so neither the start nor the caller's other threads pay for its size
/// (docs/runtimes.md "Starting a handler"). The calling thread is suspended until the child has
/// exec'd or exited; all signals are blocked around the clone, so the child starts with every
/// signal blocked and must reset the handlers before it unblocks any.
///
/// `child` runs on the caller's memory: it must only make async-signal-safe, allocation-free
/// calls, must not return into the caller's frames, and must end in execve or _exit. It must
/// change credentials with raw syscalls (glibc's setuid family would ask the caller's other
/// threads to change theirs too).
///
/// `cgroup_fd` >= 0 (a cgroup v2 directory): the child starts inside that cgroup
/// (clone3 CLONE_INTO_CGROUP, Linux 5.7+, x86-64) when the kernel allows it; `in_cgroup` says
/// whether it did, else the child is where the caller is and must join the cgroup itself. The
/// child learns which through `*started_in_cgroup` (shared memory, set before each attempt).
VmClone cloneVm(int (*child)(void*), void* arg, int cgroup_fd = -1,
                bool* started_in_cgroup = nullptr);

}  // namespace relay::runtime
