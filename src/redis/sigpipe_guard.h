#pragma once

#include <csignal>

namespace relay::redis {

/// Keeps a write to a socket whose peer is gone from killing the process with SIGPIPE.
///
/// Commands need none (their writes are send(MSG_NOSIGNAL): no_sigpipe_send.h); this covers the
/// TLS handshake, which OpenSSL writes with write(2), once per connection. A library must not
/// change the process-wide SIGPIPE disposition. So, for the duration of one call, SIGPIPE is
/// blocked in the calling thread; a SIGPIPE that the call raised is consumed before the
/// old mask comes back (the write itself fails with EPIPE, which hiredict reports as an I/O error).
/// Blocks nothing and consumes nothing when SIGPIPE was already blocked or already pending.
/// Preserves errno, so callers can read the errno of the guarded call after the guard ends.
class SigpipeGuard {
 public:
  SigpipeGuard();
  ~SigpipeGuard();
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t old_mask_;
  bool active_ = false;
};

}  // namespace relay::redis
