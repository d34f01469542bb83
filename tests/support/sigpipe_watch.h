#pragma once

#include <pthread.h>

#include <csignal>
#include <ctime>

namespace relay::testing {

/// Blocks SIGPIPE in the calling thread while it lives, so a SIGPIPE raised meanwhile stays
/// pending instead of killing the test: raised() tells whether one was. The destructor consumes
/// it and restores the mask. For tests that must see that a write raised no SIGPIPE at all
/// (blocking it only hides the signal; MSG_NOSIGNAL never raises it).
class SigpipeWatch {
 public:
  SigpipeWatch() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeWatch() {
    const timespec no_wait{0, 0};
    while (raised()) ::sigtimedwait(&pipe_, nullptr, &no_wait);
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeWatch(const SigpipeWatch&) = delete;
  SigpipeWatch& operator=(const SigpipeWatch&) = delete;

  bool raised() const {
    sigset_t pending;
    sigemptyset(&pending);
    return ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
  }

 private:
  sigset_t pipe_;
  sigset_t old_;
};

}  // namespace relay::testing
