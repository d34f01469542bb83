#pragma once

#include <string>
#include <vector>

#include "e2e/bench_cases.h"

namespace relay::bench {

/// Fairness of per-key concurrency (docs/benchmarks.md "Flow control"): `workers` workers, a
/// rule with `concurrency: {limit: 2, key: tenant}` and a handler of `handler_ms`; tenant A's
/// `flood` events added at once (none: the baseline), then tenant B's `events` paced at
/// `per_second`. Stopped once B's have started, whatever is left of A's.
struct FairnessOptions {
  int workers = 3;
  long flood = 10'000;
  int events = 100;
  double per_second = 20;
  int handler_ms = 15;
  /// B starts once A's flood is queued: read by the group and parked (its key's waiters), so
  /// B's events meet A's backlog in the key queue, not ahead of them in the stream.
  bool queued = false;
};
struct FairnessResult {
  LatencyResult b;              // B's XADD -> start
  LatencyResult b_behind;       // of those, B's added before the group had read A's backlog
  LatencyResult b_after;        // and after
  double flood_read_s = -1;     // from A's last XADD until the group had read all of A's
  double queued_s = -1;         // FairnessOptions::queued: until A's were parked
  long a_started = 0;           // A's handlers started by the time B's were all in
  double a_started_span_s = 0;  // over how long (A's first start to B's last)
  std::string error;
};
FairnessResult fairness(const BenchContext& context, const FairnessOptions& options);

/// Throttle accuracy: `workers` workers, a rule with `throttle: {limit, period: 1s, burst}` and a
/// backlog of more than `seconds` worth of events; the handler start stamps of `seconds` from
/// the first start.
struct ThrottleOptions {
  int workers = 3;
  int limit = 50;
  int burst = 5;
  int seconds = 60;
};
struct ThrottleResult {
  std::vector<long long> starts;  // realtime ns, sorted, within `seconds` of the first
  long backlog = 0;               // events added
  double backlog_read_s = -1;     // until the group had read all of them
  double first_start_s = -1;      // from the backlog's last XADD to the first start
  std::string error;
};
ThrottleResult throttleStarts(const BenchContext& context, const ThrottleOptions& options);

/// The most `starts` (sorted ns) in any window of `window_ns`, sliding by start.
long maxInWindow(const std::vector<long long>& starts, long long window_ns);

}  // namespace relay::bench
