// A worker process for crash tests: the real Worker, configured from the environment like
// `relay start`, but with the fixed internals shortened through its constructor (which the
// relay binary never does): reclaim every 200 ms, messages idle 300 ms are reclaimable, a claim
// outlives its handler's timeout by 1 s only; with RELAY_TEST_BACKOFF=<duration> (e.g. 200ms)
// every retry waits that long instead of the 1m, 2m, 5m, 10m table. Runs until killed.
#include <cstdlib>
#include <iostream>

#include "common/duration.h"
#include "common/random.h"
#include "common/system_clock.h"
#include "config/config.h"
#include "worker/worker.h"

int main() {
  using namespace relay;
  auto config = config::loadConfig(config::processEnvironment(), {}, config::defaultConsumerName());
  if (!config.ok()) {
    std::cerr << config.error().message << "\n";
    return 2;
  }
  worker::WorkerInternals internals;
  internals.consumer.block = std::chrono::milliseconds(200);
  internals.consumer.reclaim_interval = std::chrono::milliseconds(200);
  internals.consumer.min_pending_idle = std::chrono::milliseconds(300);
  internals.lifecycle.claim.margin = std::chrono::milliseconds(0);
  if (const char* backoff = std::getenv("RELAY_TEST_BACKOFF")) {
    auto delay = parseDuration(backoff);
    if (!delay.ok()) {
      std::cerr << "RELAY_TEST_BACKOFF: " << delay.error().message << "\n";
      return 2;
    }
    internals.lifecycle.backoff.delays = {*delay};
  }
  SystemClock clock;
  SystemRandom random;
  auto created = worker::Worker::create(*config, std::cerr, clock, random, internals);
  if (!created.ok()) {
    std::cerr << created.error().message << "\n";
    return 1;
  }
  (*created)->run();
  return 0;
}
