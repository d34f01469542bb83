// Replay throughput against live throughput, measured from outside through the real `relay
// start` binary against a private redis-server in the same run (scripts/bench-replay;
// docs/benchmarks.md "Replay"). One worker (process runtime, a matched no-op stamp handler). In
// each round: `--events N` matched events are added at once and drained (live: from the first
// XADD to the last acknowledgement), then a replay of exactly that window is created and its
// copies drained (replay: from the first copy's publication to the last acknowledgement; the
// driver's 1 s look for new replays stays out of it). Goal: replay >= 0.9x live.
//
//   replay_bench --relay PATH --stamp PATH [--events N] [--rounds N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "e2e/bench_cases.h"
#include "e2e/bench_main.h"
#include "e2e/stream_probe.h"
#include "e2e/worker_process.h"
#include "history/replay_record.h"
#include "invocation/keys.h"
#include "redis/connection.h"

namespace {

using namespace relay;
using namespace relay::bench;

constexpr const char* kStream = "bench-replay";

// Redis's clock (stream ids are on it), ms.
long long redisMs(redis::Connection& redis) {
  auto now = history::redisNowMs(redis);
  return now.ok() ? *now : -1;
}

// Waits until the group has acknowledged `total` messages; false after 5 minutes.
bool drained(StreamProbe& probe, long long total) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < deadline) {
    const StreamProbe::Group group = probe.group();
    if (group.entries_read >= total && group.pending == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

struct RoundResult {
  double live = 0;    // messages per second
  double replay = 0;  // copies per second
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  BenchContext context;
  long events = 2000;
  int rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--relay") context.relay = std::filesystem::absolute(value).string();
    if (flag == "--stamp") context.stamp = std::filesystem::absolute(value).string();
    if (flag == "--events") events = std::max(100, std::atoi(value));
    if (flag == "--rounds") rounds = std::max(1, std::atoi(value));
  }
  if (!prepareContext(context, "replay_bench")) return 2;
  std::printf("relay replay benchmark: %ld cores online, load average %s\n",
              ::sysconf(_SC_NPROCESSORS_ONLN), loadavg().c_str());
  auto connection = redis::Connection::create(context.redis);
  if (!connection.ok()) {
    std::printf("cannot connect to Redis: %s\n", connection.error().message.c_str());
    return 1;
  }
  redis::Connection& redis = **connection;
  StreamProbe probe(redis, kStream);
  probe.fill(0, kMatchedEvent);
  const auto apps = writeApp(context, "apps-replay", {});
  std::string error;
  auto workers =
      startWorkers(context, apps, "process", kStream, context.redis.port, probe, 1, error);
  if (workers.empty()) {
    std::printf("FAILED: %s\n", error.c_str());
    return 1;
  }
  const invocation::StreamKeys keys{kStream, "relay"};
  std::printf(
      "(r) one worker, process runtime, MAX_CONCURRENCY %d, matched no-op; %ld events a "
      "round, %d rounds\n",
      context.concurrency, events, rounds);
  std::vector<RoundResult> results;
  long long total = 0;
  for (int round = 1; round <= rounds; ++round) {
    // Live: the events added at once, drained.
    const long long live_start = redisMs(redis);
    std::vector<std::vector<std::string>> adds(static_cast<std::size_t>(events),
                                               {"XADD", kStream, "*", "event", kMatchedEvent});
    auto added = redis.pipeline(adds);
    if (!added.ok() || added->size() != adds.size()) {
      std::printf("FAILED: XADD\n");
      return 1;
    }
    const std::string first(*added->front()->string());
    const std::string last(*added->back()->string());
    total += events;
    if (!drained(probe, total)) {
      std::printf("FAILED: the live events were not drained: %s\n",
                  workers.front()->logTail().c_str());
      return 1;
    }
    const long long live_end = redisMs(redis);
    // Replay: the same window, its copies drained.
    history::ReplaySpec spec;
    spec.app = "bench";
    spec.from = first;
    spec.to = last;
    spec.again = true;
    const std::string id = history::newReplayId(live_end, static_cast<std::uint32_t>(round));
    auto created = history::createReplay(redis, keys, spec, id);
    if (!created.ok()) {
      std::printf("FAILED: %s\n", created.error().message.c_str());
      return 1;
    }
    total += events;
    if (!drained(probe, total)) {
      std::printf("FAILED: the copies were not drained: %s\n", workers.front()->logTail().c_str());
      return 1;
    }
    const long long replay_end = redisMs(redis);
    auto copies = redis.command({"HVALS", keys.replayCopies(id)});
    long long first_copy = replay_end;
    for (std::size_t i = 0; copies.ok() && i < copies->size(); ++i) {
      const std::string copy(*copies->at(i)->string());
      first_copy = std::min(first_copy, std::atoll(copy.substr(0, copy.find('-')).c_str()));
    }
    RoundResult result;
    result.live = 1000.0 * static_cast<double>(events) /
                  static_cast<double>(std::max(1LL, live_end - live_start));
    result.replay = 1000.0 * static_cast<double>(events) /
                    static_cast<double>(std::max(1LL, replay_end - first_copy));
    std::printf("  round %d: live %8.1f msg/s, replay %8.1f copies/s, %.2fx (load average %s)\n",
                round, result.live, result.replay, result.replay / result.live, loadavg().c_str());
    results.push_back(result);
  }
  std::sort(results.begin(), results.end(), [](const RoundResult& a, const RoundResult& b) {
    return a.replay / a.live < b.replay / b.live;
  });
  const RoundResult& median = results[results.size() / 2];
  row("replay throughput, median round", median.replay, "copies/s", median.replay / median.live,
      "goal >= 0.9x of live");
  return 0;
}
