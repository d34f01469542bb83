#include "runtime/init_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace

void becomeInitIfPid1() {
  if (::getpid() != 1) return;
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
