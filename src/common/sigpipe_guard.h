#pragma once

#include <csignal>

namespace relay {

/// Keeps a write to a socket or pipe whose reader is gone from killing the process with
/// SIGPIPE: the write fails with EPIPE instead.
///
/// Used where send(MSG_NOSIGNAL) is not possible: the TLS handshake, which OpenSSL writes with
/// write(2), once per Redis connection (commands write with MSG_NOSIGNAL:
/// redis/no_sigpipe_send.h), and the event written to a handler's stdin pipe
/// (runtime/child_process.cpp). A library must not change the process-wide SIGPIPE disposition
/// (handlers would inherit it). So, for the guard's scope, SIGPIPE is blocked in the calling
/// thread; a SIGPIPE raised meanwhile is consumed before the old mask comes back.
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

}  // namespace relay
