#pragma once

namespace relay::runtime::child_setup {

// The steps a freshly forked (or vforked/cloned) child takes before it execs a handler or
// bwrap. Every function here is async-signal-safe: raw syscalls, no allocation, no locks, so
// they may run between fork() and execve() of a multithreaded Relay (docs/runtimes.md "What
// the sandbox guarantees").

/// How descriptors from `first` up are marked close-on-exec; exposed so each fallback can be
/// tested on a kernel that has the first.
enum class CloexecMethod {
  kCloseRange,  // close_range(first, ~0U, CLOSE_RANGE_CLOEXEC): Linux 5.11+
  kProcSelfFd,  // getdents64 over /proc/self/fd, fcntl(FD_CLOEXEC) on each
  kRlimitScan,  // fcntl(FD_CLOEXEC) on every number below RLIMIT_NOFILE
};

/// Marks every open descriptor >= `first` close-on-exec with `method`, so that only 0..first-1
/// survive the next execve while the ones still needed before it (an exec-error pipe) keep
/// working. Returns false with errno set when the method is not available here.
bool markCloexecFrom(int first, CloexecMethod method);

/// markCloexecFrom with the best method this kernel offers, falling back in the order above.
/// Returns false (errno set) only when none worked.
bool markCloexecFrom(int first);

/// Replaces the inherited session keyring with a fresh anonymous one, so the handler cannot
/// reach the keys of Relay's session (systemd, runc) or of an earlier invocation. Success also
/// when the kernel has no keyrings at all (ENOSYS). Returns false with errno set otherwise.
bool joinFreshSessionKeyring();

/// Makes sources[i] the descriptor i for every i < count (not close-on-exec), whatever their
/// numbers (a source may already sit on another's target). `scratch` has room for `count`
/// descriptors. Returns false with errno set on failure.
bool installFds(const int* sources, int* scratch, int count);

}  // namespace relay::runtime::child_setup
