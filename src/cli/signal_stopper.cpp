#include "cli/signal_stopper.h"

#include <pthread.h>

#include "common/thread_name.h"

namespace relay::cli {

SignalStopper::SignalStopper() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
}

SignalStopper::SignalStopper(std::function<void(int signal)> stop) : SignalStopper() {
  start(std::move(stop));
}

void SignalStopper::start(std::function<void(int signal)> stop,
                          std::function<void(int signal)> again) {
  thread_ = namedThread("relay-signals", [this, stop = std::move(stop), again = std::move(again)] {
    int signal = 0;
    sigwait(&signals_, &signal);
    if (done_) return;
    stop(signal);
    if (!again) return;
    sigwait(&signals_, &signal);
    if (!done_) again(signal);
  });
}

SignalStopper::~SignalStopper() {
  done_ = true;
  if (thread_.joinable()) {
    pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigwait if no signal came
    thread_.join();
  }
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace relay::cli
