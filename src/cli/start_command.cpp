#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <memory>
#include <thread>

#include "cli/app_flags.h"
#include "cli/command.h"
#include "common/random.h"
#include "common/system_clock.h"
#include "worker/config.h"
#include "worker/worker.h"

namespace relay::cli {
namespace {

// SIGTERM/SIGINT are blocked in every thread and taken by one waiting thread. The first asks
// the worker to stop gracefully (running handlers finish); a second one while stopping stops at
// once: the running handlers' claims are released and the process ends with 128 + the signal,
// its handlers killed with it (docs/pipeline.md "Stopping").
class SignalStopper {
 public:
  explicit SignalStopper(worker::Worker& worker) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGTERM);
    sigaddset(&signals_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
    thread_ = std::thread([this, &worker] {
      int signal = 0;
      sigwait(&signals_, &signal);
      if (done_) return;
      worker.logger().info(signal == SIGINT ? "SIGINT: stopping (again to stop at once)"
                                            : "SIGTERM: stopping (again to stop at once)");
      worker.stop();
      sigwait(&signals_, &signal);
      if (done_) return;
      worker.abort();
      std::_Exit(128 + signal);
    });
  }
  ~SignalStopper() {
    done_ = true;
    pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigwait if no signal came
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }

 private:
  sigset_t signals_{};
  sigset_t previous_{};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace

void addStartCommand(CLI::App& root, CommandContext& context) {
  CLI::App* command = root.add_subcommand(
      "start", "Run the worker in the foreground; SIGTERM/SIGINT stop it gracefully");
  auto flags = std::make_shared<AppFlags>();
  addAppFlags(*command, *flags);
  command->callback([&context, flags] {
    auto config = worker::loadConfig(worker::processEnvironment(), {flags->apps, flags->runtime},
                                     worker::defaultConsumerName());
    if (!config.ok()) {
      context.err << "relay start: " << config.error().message << "\n";
      context.exit_code = kExitUsage;
      return;
    }
    SystemClock clock;
    SystemRandom random;
    auto created = worker::Worker::create(*config, context.err, clock, random);
    if (!created.ok()) {
      context.err << "relay start: " << created.error().message << "\n";
      context.exit_code = kExitFailed;
      return;
    }
    worker::Worker& worker = **created;
    SignalStopper stopper(worker);
    worker.run();
  });
}

}  // namespace relay::cli
