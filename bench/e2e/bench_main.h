#pragma once
// What the end-to-end benchmarks' mains share: rounds against a baseline, rows, set-up.

#include <functional>
#include <string>
#include <vector>

#include "e2e/bench_cases.h"

namespace relay::bench {

/// Loopback round trips and process starts on these shared machines vary several-fold from one
/// second to the next: a throughput case runs in rounds, its baseline before and after each
/// round, the faster of the two counting for that round (the ratio errs against Relay), and the
/// case's figure is the median round.
inline constexpr int kRounds = 3;

struct Round {
  double baseline = 0;
  DrainResult relay;
  double ratio() const { return relay.rate / baseline; }
};

/// `rounds` rounds of `relay` between runs of `baseline`, sorted by ratio (the median is
/// [size / 2]); each printed as it ends. Fewer when a Relay run failed: `error` says why.
std::vector<Round> interleavedRounds(const char* baseline_name,
                                     const std::function<double()>& baseline,
                                     const std::function<DrainResult()>& relay, std::string& error,
                                     int rounds = kRounds);

/// "rounds' ratios  <lowest>x - <highest>x".
void printRoundsSpread(const std::vector<Round>& rounds);

/// One figure row: name, value and unit, and its ratio and goal when ratio >= 0.
void row(const char* name, double value, const char* unit, double ratio, const char* goal);

/// Redis round trips and commands per message of a proxied run's window, by command.
void printRedis(const char* what, const DrainResult& result);

/// /proc/loadavg's three load averages.
std::string loadavg();

/// What a benchmark's main sets up after its flags: context.redis from REDIS_URI (TCP), and
/// context.root, a fresh world-readable scratch directory /tmp/relay-<program>-XXXXXX. False
/// (usage printed) when REDIS_URI is not a TCP address or --relay or --stamp is missing.
bool prepareContext(BenchContext& context, const char* program);

}  // namespace relay::bench
