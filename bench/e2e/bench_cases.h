#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "e2e/counting_proxy.h"
#include "e2e/spawn_baseline.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "runtime/sandbox/seccomp_filter.h"

namespace relay::bench {

/// What every case of the end-to-end benchmark shares.
struct BenchContext {
  redis::Endpoint redis;       // the private server (TCP)
  std::string relay;           // the relay binary
  std::string stamp;           // the stamp handler binary
  std::filesystem::path root;  // a scratch directory, world-readable (the sandbox user reads it)
  int concurrency = 16;        // MAX_CONCURRENCY and the app's concurrency
  std::string docker_image = "relay-test/exec:latest";
  std::filesystem::path image_cache;  // the workers' RELAY_IMAGE_CACHE (under root)
};

/// What a case runs on: `process`, `sandbox` (the host's root), `docker`, or `sandbox+image`
/// (the sandbox runtime on docker_image's root, docs/runtimes.md "Image roots").
struct Target {
  std::string runtime;  // RELAY_RUNTIME
  std::string image;    // the app's `image`; empty: none
};
Target targetOf(const BenchContext& context, const std::string& name);

/// One app with one exec handler (the stamp handler) matching {"kind":"match"}; returns the
/// apps directory. `env` becomes the app's env; `image` its image (none when empty); `rule`
/// more keys of the rule, one `key: value` a line (flow control, docs/apps.md).
std::filesystem::path writeApp(const BenchContext& context, const std::string& name,
                               const std::map<std::string, std::string>& env,
                               const std::string& image = {},
                               const std::vector<std::string>& rule = {});

class StreamProbe;
class WorkerProcess;

/// `count` `relay start` workers on `stream` (consumers bench, bench-2, ...), each logging to
/// its own file under context.root; returned once every one of them is reading (at most 60 s).
/// Empty, with `error` set, when one did not start.
std::vector<std::unique_ptr<WorkerProcess>> startWorkers(
    const BenchContext& context, const std::filesystem::path& apps, const std::string& runtime,
    const std::string& stream, int port, StreamProbe& probe, int count, std::string& error);

/// The events: matched by the app above, or not.
inline const std::string kMatchedEvent = R"({"kind":"match","n":1})";
inline const std::string kUnmatchedEvent = R"({"kind":"other","n":1})";

/// Context switches of the whole machine since boot (/proc/stat `ctxt`): every task's, the
/// worker's threads, its handlers, redis-server and the kernel's alike.
long long machineSwitches();
/// redis-server's own CPU seconds so far (INFO cpu: used_cpu_user + used_cpu_sys), asked on
/// `redis`; -1 when it does not answer.
double redisCpuSeconds(redis::Connection& redis);

/// Raw XREADGROUP COUNT 10 + one XACK per batch on one connection: messages per second.
double rawReadAckRate(const BenchContext& context, long messages);

/// Case (b)'s floor, a bareSpawnRate() step: what a runner that makes each invocation's three
/// transitions durable (the claim before the start, the start, the outcome after the reap: the
/// *start*, *begin* and *complete* of docs/pipeline.md) pays at least, one round trip each of a
/// script that does one HSET (a field of the spawner's own in one hash), on each spawner's own
/// connection.
SpawnerStep durableTransitions(const BenchContext& context);
/// Deletes what durableTransitions() wrote.
void dropTransitions(const BenchContext& context);

/// A worker draining `messages` pre-filled events; rates over the middle 80%. With
/// `until_read`, of messages delivered rather than acknowledged (flow control's deferrals).
struct DrainResult {
  double rate = 0;                             // messages per second (0: did not finish)
  double cpu_self_ms = 0;                      // worker CPU per message in the window
  double cpu_children_ms = 0;                  // reaped children's CPU per message in the window
  std::optional<CountingProxy::Counts> redis;  // per-window counts when proxied
  double switches = 0;      // context switches of the whole machine per message in the window
  double redis_cpu_ms = 0;  // redis-server's CPU (user + system) per message in the window
  long window_messages = 0;
  std::string error;
};
DrainResult workerDrain(const BenchContext& context, const std::string& runtime,
                        const std::string& event, long messages, bool through_proxy,
                        const std::vector<std::string>& rule = {}, bool until_read = false);

/// XADD -> handler start latencies (ms) at a steady `per_second` for `events` events.
struct LatencyResult {
  std::vector<double> samples;  // one per event whose stamp arrived
  long missing = 0;
  std::string error;
};
LatencyResult workerLatency(const BenchContext& context, const std::string& runtime,
                            double per_second, int events,
                            const std::vector<std::string>& rule = {});
/// The floor of case (c) that no reader of the stream gets under: XADD -> a bare XREADGROUP
/// BLOCK client holds the entry, at a steady `per_second` for `events` events (ms), on a reader
/// thread of this process that does nothing else (it acknowledges each read).
LatencyResult bareReadLatency(const BenchContext& context, double per_second, int events);
/// The stamps of `workers` until every id of `added` (id -> realtime ns just before its XADD)
/// has one or `limit` passes; XADD -> start latencies in ms of those that do. `stamps` (when
/// given) receives every stamp seen, by message id.
LatencyResult startLatencies(std::vector<std::unique_ptr<WorkerProcess>>& workers,
                             const std::map<std::string, long long>& added,
                             std::chrono::seconds limit,
                             std::map<std::string, long long>* stamps = nullptr);

/// One image unpacked into a fresh cache, as the sandbox runtime unpacks it (docs/runtimes.md
/// "Image roots").
struct UnpackResult {
  double seconds = 0;             // the export and unpack, measured from outside
  std::uint64_t cache_bytes = 0;  // what its entry takes in the cache
  std::uint64_t image_bytes = 0;  // the image's size as the daemon reports it
  std::string error;
};
UnpackResult unpackImage(const BenchContext& context, const std::string& image);

/// Worker RSS idle and with `backlog` matched events whose handler takes a while.
struct MemoryResult {
  long idle_kib = -1;
  long backlog_kib = -1;
  long backlog_peak_kib = -1;
  long long in_hand = -1;  // delivered, unacknowledged when measured
  std::string error;
};
MemoryResult workerMemory(const BenchContext& context, long backlog);

/// The bare baselines: the handler itself, under a bare bwrap, and under `docker run`.
struct BareCommands {
  std::vector<std::string> process;
  std::vector<std::string> bwrap;
  /// bwrap with exactly the options Relay's sandbox runtime gives a cold start (its argv
  /// builder, docs/runtimes.md "sandbox") and `relay_seccomp` for --seccomp 3; no cgroup.
  std::vector<std::string> relay_bwrap;
  uid_t relay_id = 65534;  // the uid relay_bwrap runs as
  std::optional<runtime::SeccompFilter> relay_seccomp;
  std::vector<std::string> docker;         // empty when docker cannot be measured
  std::vector<std::string> docker_create;  // the same container created, for `docker start -a`
  std::string docker_problem;
};
BareCommands bareCommands(const BenchContext& context);

/// p in [0, 100] of `samples` (sorted copy); -1 when empty.
double percentile(std::vector<double> samples, double p);

}  // namespace relay::bench
