#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sandbox/seccomp_filter.h"

namespace relay::bench {

/// A command the baselines start directly, without Relay: the handler itself (fork/exec), the
/// handler under a bare bwrap, or `docker run` of it.
struct BareCommand {
  std::vector<std::string> argv;  // argv[0] absolute
  std::vector<std::string> env;   // complete environment
  std::optional<uid_t> uid;       // dropped to before exec (as Relay does before bwrap)
  std::optional<gid_t> gid;
  /// When set, each start finds its program on a fresh memfd at descriptor 3 (what Relay
  /// hands `bwrap --seccomp 3`).
  std::optional<runtime::SeccompFilter> seccomp;
};

/// CLOCK_REALTIME in nanoseconds: the clock of the stamp handler's `relay-stamp` lines.
long long realtimeNs();

/// One `relay-stamp <message id> <ns>` line of the stamp handler (bench/e2e/stamp_handler.cpp).
struct Stamp {
  std::string id;
  long long ns = 0;
};
/// The first stamp in `text`; nullopt when it holds none.
std::optional<Stamp> findStamp(std::string_view text);

/// What each spawner of bareSpawnRate() does beside its starts: made once in each spawner
/// process after its fork, then called before each start, after its spawn and after its reap
/// (where a runner records an invocation's claim, its start and its outcome); false fails the
/// run.
using SpawnerStep = std::function<std::function<bool()>()>;

/// Starts `count` runs of `command` from `concurrency` single-threaded spawner processes, each
/// running one at a time, stdin and stdout on /dev/null, with `step` around each start when
/// given; returns runs per second (0 when one failed).
double bareSpawnRate(const BareCommand& command, int concurrency, int count,
                     const SpawnerStep& step = {});

/// Starts `command` `count` times one after the other; each prints a `relay-stamp` line whose
/// time, minus the time just before the fork, is one sample. Returns the samples in
/// milliseconds (empty when one failed).
std::vector<double> bareStartLatencies(const BareCommand& command, int count,
                                       std::chrono::microseconds pace = {});

/// The same starts as the events of case (c) arrive: start i is due at i x `pace` from the
/// first, at most `concurrency` run at once (a due start waits for one to end, as an event
/// waits for a free handler slot), each sample its stamp's time minus its due time, in
/// milliseconds (empty when one failed). Below the runtime's own rate this is the paced start;
/// above it, the queueing any one-shot runner of that runtime has at that arrival rate.
std::vector<double> bareArrivalLatencies(const BareCommand& command, int count,
                                         std::chrono::microseconds pace, int concurrency);

/// `docker start -a` of containers created ahead: `create` (a `docker create ...` that prints the
/// new container's id) runs `count` times first, untimed; then the containers are started one
/// at a time, one due every `pace`, each attached, and a sample is its stamp's time minus the
/// time just before its start. Every container is removed afterwards. Milliseconds; empty when
/// one failed.
std::vector<double> createdStartLatencies(const BareCommand& create, int count,
                                          std::chrono::microseconds pace);

}  // namespace relay::bench
