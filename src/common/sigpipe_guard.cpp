#include "common/sigpipe_guard.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace relay {
namespace {

sigset_t sigpipeSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

}  // namespace

SigpipeGuard::SigpipeGuard() {
  const int saved_errno = errno;
  sigemptyset(&old_mask_);
  sigset_t pending;
  sigemptyset(&pending);
  // A SIGPIPE pending from before is not ours to swallow: leave everything alone.
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 0) {
    const sigset_t set = sigpipeSet();
    if (pthread_sigmask(SIG_BLOCK, &set, &old_mask_) == 0) {
      active_ = sigismember(&old_mask_, SIGPIPE) == 0;
    }
  }
  errno = saved_errno;
}

SigpipeGuard::~SigpipeGuard() {
  if (!active_) return;
  const int saved_errno = errno;
  const sigset_t set = sigpipeSet();
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
    const timespec no_wait{0, 0};
    while (sigtimedwait(&set, nullptr, &no_wait) == -1 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  errno = saved_errno;
}

}  // namespace relay
