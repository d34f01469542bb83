#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace relay::cli {

/// Turns the first SIGTERM or SIGINT into a call of `stop` (with the signal number), for the
/// commands that run until told to stop (`relay start`, `relay console`). Construct it before
/// anything starts a thread: the signals are blocked in every thread created after it (a
/// thread that left them unblocked would let SIGTERM kill the process outright), stay pending
/// until start(), and are then taken by one waiting thread; a second signal while stopping
/// calls `again` when given (`relay start` stops at once, docs/pipeline.md "Stopping"), else it
/// is ignored (the stop is running). The destructor ends the waiting thread and restores the
/// signal mask.
class SignalStopper {
 public:
  /// Blocks SIGTERM and SIGINT in the calling thread (and so in every thread it creates).
  SignalStopper();
  /// SignalStopper() then start(stop).
  explicit SignalStopper(std::function<void(int signal)> stop);
  /// Starts the waiting thread; a signal that came since the constructor is taken at once.
  void start(std::function<void(int signal)> stop, std::function<void(int signal)> again = {});
  ~SignalStopper();
  SignalStopper(const SignalStopper&) = delete;
  SignalStopper& operator=(const SignalStopper&) = delete;

 private:
  sigset_t signals_{};
  sigset_t previous_{};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace relay::cli
