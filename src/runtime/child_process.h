#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "runtime/cancel_signal.h"
#include "runtime/output_lines.h"

namespace relay::runtime {

/// How to start a child: no shell, no PATH search, a fresh environment.
struct LaunchOptions {
  std::string executable;                       // absolute path
  std::vector<std::string> argv;                // argv[0] included
  std::vector<std::string> env;                 // KEY=VALUE, the complete environment
  std::string cwd;                              // empty: inherit
  std::vector<std::string> cgroup_procs_files;  // the child joins each cgroup before exec
  int cgroup_fd = -1;        // v2: the child starts in this cgroup directory (then skips the files)
  std::optional<uid_t> uid;  // dropped to (with gid, no supplementary groups)
  std::optional<gid_t> gid;
  /// Descriptors the program gets as 3, 4, ... (e.g. bwrap --seccomp 3); still owned by the
  /// caller. Every other descriptor above 2 is closed at exec.
  std::vector<int> inherited_fds;
  /// Sets no_new_privs before exec. Off only for a program that must gain capabilities in a
  /// user namespace of its own across an exec (pasta running bwrap); bwrap sets it for the
  /// handler itself.
  bool no_new_privs = true;
};

/// An owned child process in its own session with piped stdin/stdout/stderr. The destructor
/// kills the child's process group and reaps it if it is still running.
class ChildProcess {
 public:
  /// Starts the child without copying Relay's address space (cloneVm) and execs. Fails
  /// (kUnavailable) when the executable cannot be started.
  static Result<std::unique_ptr<ChildProcess>> spawn(const LaunchOptions& options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  /// How the child ended.
  struct Termination {
    bool exited = false;  // true: `code` is valid; false: killed by `signal`
    int code = 0;
    int signal = 0;
    bool timed_out = false;
    bool cancelled = false;  // stopped because `cancel` was requested (timed_out is then false)
  };

  /// A descriptor supervise() reads besides stdout and stderr (a sandbox's start report):
  /// `on_data` gets what each read returned, always before the output that poll round found,
  /// so nothing the child wrote to stdout or stderr after writing here is seen first. Read until
  /// EOF or the end of supervise(); not owned.
  struct SideChannel {
    int fd = -1;
    std::function<void(std::string_view)> on_data;
  };

  /// Writes `input` to stdin then closes it, forwards stdout/stderr line by line, and waits for
  /// the child to exit. At `timeout` calls signal_tree(SIGTERM), 2 s later signal_tree(SIGKILL).
  /// After the child exits, remaining descendants are killed via signal_tree(SIGKILL). A
  /// `cancel` requested before the child ends stops it the same way at once (SIGTERM, SIGKILL
  /// after the grace) and marks the termination cancelled. Blocks.
  Result<Termination> supervise(std::string_view input, LineSplitter& out, LineSplitter& err,
                                Clock& clock, std::chrono::milliseconds timeout,
                                const std::function<void(int)>& signal_tree,
                                const SideChannel* side = nullptr,
                                const CancelSignal* cancel = nullptr);

  /// Sends `signal` to the child's process group.
  void signalGroup(int signal) const;
  /// Whether the child has ended (it may not be reaped yet). Does not block.
  bool ended() const;

 private:
  ChildProcess() = default;
  Result<Termination> reap();

  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd stdin_fd_;
  UniqueFd stdout_fd_;
  UniqueFd stderr_fd_;
  bool reaped_ = false;
};

/// Grace period between SIGTERM and SIGKILL on timeout (docs/runtimes.md "Contract").
inline constexpr std::chrono::seconds kKillGrace{2};

/// Finds `name` on PATH (or returns it when it contains a slash); nullopt when absent.
std::optional<std::string> findExecutable(std::string_view name, std::string_view path_env);

/// Outcome of an invocation from how its process ended (`exit 3`, `signal 9`, `timeout 20s`).
Outcome outcomeOf(const ChildProcess::Termination& termination, std::chrono::milliseconds timeout,
                  std::chrono::nanoseconds duration);

}  // namespace relay::runtime
