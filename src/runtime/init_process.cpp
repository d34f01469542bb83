#include "runtime/init_process.h"

#include <linux/capability.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace relay::runtime {
namespace {

bool forwarded(int signal) {
  switch (signal) {
    case SIGTERM:
    case SIGINT:
    case SIGHUP:
    case SIGQUIT:
    case SIGUSR1:
    case SIGUSR2:
      return true;
    default:
      return false;
  }
}

// PID 1's loop: every signal is blocked and taken with sigwaitinfo (a blocked signal reaches an
// init even without a handler). Never returns.
[[noreturn]] void superviseAsInit(pid_t child, const sigset_t& all) {
  while (true) {
    siginfo_t info{};
    const int signal = ::sigwaitinfo(&all, &info);
    if (signal < 0) continue;  // EINTR
    if (signal != SIGCHLD) {
      if (forwarded(signal)) ::kill(child, signal);
      continue;
    }
    int status = 0;
    pid_t reaped;
    while ((reaped = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped != child) continue;  // an orphan: reaping it was the point
      // When PID 1 exits the kernel kills what is left of the namespace.
      ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
  }
}

// This process's capability sets (version 3: two 32-bit words each).
struct CapSets {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
};

bool capabilitySets(CapSets& sets) { return ::syscall(SYS_capget, &sets.header, sets.data) == 0; }

bool effective(const CapSets& sets, int cap) {
  return (sets.data[cap / 32].effective & (1U << (cap % 32))) != 0;
}

}  // namespace

std::vector<std::string> mountsBelowProc(const std::string& mounts_text) {
  std::vector<std::string> points;
  std::istringstream lines(mounts_text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string device, point;
    if (fields >> device >> point && point.rfind("/proc/", 0) == 0) points.push_back(point);
  }
  std::reverse(points.begin(), points.end());
  return points;
}

std::string unmaskProcAndShedSysAdmin() {
  CapSets sets;
  if (!capabilitySets(sets) || !effective(sets, CAP_SYS_ADMIN)) return {};
  std::ifstream in("/proc/self/mounts");
  std::stringstream text;
  text << in.rdbuf();
  int detached = 0;
  for (const std::string& point : mountsBelowProc(text.str())) {
    if (::umount2(point.c_str(), MNT_DETACH) == 0) ++detached;
  }
  // Out of the bounding set first (that takes CAP_SETPCAP), so no exec regains them; then out
  // of this process's own sets, which the forked Relay inherits.
  const bool bounded = ::prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) == 0 &&
                       ::prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0, 0, 0) == 0;
  for (const int cap : {CAP_SYS_ADMIN, CAP_SETPCAP}) {
    for (auto* set : {&sets.data[cap / 32].effective, &sets.data[cap / 32].permitted,
                      &sets.data[cap / 32].inheritable}) {
      *set &= ~(1U << (cap % 32));
    }
  }
  if (::syscall(SYS_capset, &sets.header, sets.data) != 0) {
    // Never run Relay, let alone a handler, with CAP_SYS_ADMIN.
    std::fprintf(stderr, "relay (PID 1): cannot drop CAP_SYS_ADMIN: %s\n", std::strerror(errno));
    ::_exit(1);
  }
  return "PID 1 held CAP_SYS_ADMIN: detached " + std::to_string(detached) +
         " mounts over /proc (a masked /proc refuses the sandbox a fresh one), then dropped it" +
         (bounded ? " and CAP_SETPCAP, bounding set included"
                  : " (not from the bounding set: no CAP_SETPCAP)");
}

void becomeInitIfPid1() {
  if (::getpid() != 1) return;
  // Before the fork: Relay never holds CAP_SYS_ADMIN (docs/deployment.md "Docker Compose").
  if (const std::string note = unmaskProcAndShedSysAdmin(); !note.empty()) {
    std::fprintf(stderr, "relay (PID 1): %s\n", note.c_str());
  }
  sigset_t all;
  sigset_t previous;
  ::sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &previous);
  const pid_t child = ::fork();
  if (child != 0) {
    if (child > 0) superviseAsInit(child, all);
    // fork failed: run as Relay without an init rather than not at all.
  }
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace relay::runtime
