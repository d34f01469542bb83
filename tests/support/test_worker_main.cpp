// A worker process for crash tests: the real Worker, configured from the environment like
// `relay start`, but with the fixed internals shortened through its constructor (which the
// relay binary never does): reclaim every 200 ms, messages idle 300 ms are reclaimable, a claim
// outlives its handler's timeout by its 2 s kill grace only, renewals (and heartbeats) every
// 100 ms, an outage is a gap of 1.5 s and expired claims wait 2 s after one, an invocation no
// worker could run is looked at again after 1 s; with RELAY_TEST_BACKOFF=<duration> (e.g.
// 200ms) every retry waits that long instead of the 1m, 2m, 5m, 10m table; with
// RELAY_TEST_DUE_POLL=<duration> the due-retry poller looks that seldom unless woken; with
// RELAY_TEST_CRASH_ON=<text> the process aborts when it is about to process an event containing
// that text (a poison message, docs/pipeline.md "Poison messages"), and its heartbeat lives 1 s;
// replays are looked for every 200 ms and a lease lasts 1.5 s (RELAY_TEST_REPLAY_PAGE: page size).
// Runs until killed.
#include <cstdlib>
#include <iostream>
#include <string>

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
  internals.lifecycle.claim.outage_gap = std::chrono::milliseconds(1'500);
  internals.lifecycle.claim.takeover_grace = std::chrono::milliseconds(2'000);
  internals.lifecycle.retry_elsewhere = std::chrono::milliseconds(1'000);
  internals.renewal.interval = std::chrono::milliseconds(100);
  internals.consumer.due_poll = std::chrono::milliseconds(200);
  if (const char* backoff = std::getenv("RELAY_TEST_BACKOFF")) {
    auto delay = parseDuration(backoff);
    if (!delay.ok()) {
      std::cerr << "RELAY_TEST_BACKOFF: " << delay.error().message << "\n";
      return 2;
    }
    internals.lifecycle.backoff.delays = {*delay};
  }
  if (const char* poll = std::getenv("RELAY_TEST_DUE_POLL")) {
    auto interval = parseDuration(poll);
    if (!interval.ok()) {
      std::cerr << "RELAY_TEST_DUE_POLL: " << interval.error().message << "\n";
      return 2;
    }
    internals.consumer.due_poll = *interval;
  }
  if (const char* crash = std::getenv("RELAY_TEST_CRASH_ON")) {
    const std::string marker = crash;
    internals.on_message = [marker](const invocation::Message& message) {
      if (message.valueOf("event").find(marker) != std::string_view::npos) std::abort();
    };
  }
  // Replays (docs/replay.md "Driving"): looked for every 200 ms, a dead driver's lease free
  // after 1.5 s; RELAY_TEST_REPLAY_PAGE=<n> publishes n copies a page.
  internals.replays.poll = std::chrono::milliseconds(200);
  internals.replays.lease = std::chrono::milliseconds(1'500);
  if (const char* page = std::getenv("RELAY_TEST_REPLAY_PAGE")) {
    internals.replays.page = static_cast<std::size_t>(std::atoi(page));
  }
  internals.housekeeping.refresh_interval = std::chrono::milliseconds(200);
  internals.housekeeping.heartbeat_ttl = std::chrono::milliseconds(1'000);
  // The archiver: small batches every 50 ms, so a backlog takes a while (a test kills it midway),
  // and a lease that runs out within a second.
  internals.archiver.interval = std::chrono::milliseconds(50);
  internals.archiver.lease = std::chrono::milliseconds(1'000);
  internals.archiver.batch = 25;
  internals.archiver.batches_per_pass = 1;
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
