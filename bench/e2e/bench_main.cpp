#include "e2e/bench_main.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace relay::bench {

std::vector<Round> interleavedRounds(const char* baseline_name,
                                     const std::function<double()>& baseline,
                                     const std::function<DrainResult()>& relay, std::string& error,
                                     int rounds) {
  std::vector<Round> done;
  double before = baseline();
  for (int i = 0; i < rounds; ++i) {
    Round round;
    round.relay = relay();
    const double after = baseline();
    round.baseline = std::max(before, after);
    before = after;
    if (!round.relay.error.empty()) {
      error = round.relay.error;
      break;
    }
    std::printf("  round %d: %s %.1f/s, relay %.1f msg/s, %.2fx\n", i + 1, baseline_name,
                round.baseline, round.relay.rate, round.ratio());
    done.push_back(std::move(round));
  }
  std::sort(done.begin(), done.end(),
            [](const Round& a, const Round& b) { return a.ratio() < b.ratio(); });
  return done;
}

void printRoundsSpread(const std::vector<Round>& rounds) {
  std::printf("  %-50s %.2fx - %.2fx\n", "rounds' ratios", rounds.front().ratio(),
              rounds.back().ratio());
}

void row(const char* name, double value, const char* unit, double ratio, const char* goal) {
  std::printf("  %-50s %10.1f %-6s", name, value, unit);
  if (ratio >= 0) std::printf(" %8.2fx  %s", ratio, goal);
  std::printf("\n");
}

std::string loadavg() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

void printRedis(const char* what, const DrainResult& result) {
  if (!result.redis || result.window_messages == 0) return;
  const double n = static_cast<double>(result.window_messages);
  std::printf("  %-50s %10.2f round trips, %.2f commands:", what, result.redis->round_trips / n,
              result.redis->commands / n);
  for (const auto& [name, count] : result.redis->by_command) {
    if (count > 0) std::printf(" %s %.2f", name.c_str(), count / n);
  }
  std::printf("\n");
}

bool prepareContext(BenchContext& context, const char* program) {
  const char* uri = std::getenv("REDIS_URI");
  auto endpoint = redis::parseRedisUri(uri ? uri : "127.0.0.1:6379");
  if (!endpoint.ok() || endpoint->transport != redis::Endpoint::Transport::kTcp ||
      context.relay.empty() || context.stamp.empty()) {
    std::fprintf(stderr, "usage: REDIS_URI=host:port %s --relay PATH --stamp PATH\n", program);
    return false;
  }
  context.redis = *endpoint;
  std::string pattern = std::string("/tmp/relay-") + program + "-XXXXXX";
  context.root = ::mkdtemp(pattern.data());
  ::chmod(context.root.c_str(), 0755);
  return true;
}

}  // namespace relay::bench
