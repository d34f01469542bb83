// The Redis-side cost of the *start* and *complete* lifecycle scripts (docs/pipeline.md
// "Scripts"): N messages driven through the real RedisLifecycleStore, one verb at a time for all
// of them, with `INFO commandstats` reset before and read after each batch. Prints per script
// call: the server's usec_per_call of EVALSHA, the commands the script ran (redis.call and
// redis.pcall), and the calls/s one client got; next to an empty script's cost measured in the
// same run (the fixed cost of any script call on this machine).
//
//   REDIS_URI=127.0.0.1:6379 lifecycle_bench [--messages N]
//   (scripts/bench-lifecycle starts a private redis-server)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stream.h"
#include "common/system_clock.h"
#include "invocation/redis_lifecycle_store.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace {

using namespace relay;
using namespace relay::invocation;
using std::chrono::milliseconds;

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "lifecycle_bench: " << message << "\n";
  std::exit(1);
}

/// What the server counted for one batch of script calls.
struct ServerCost {
  long long script_calls = 0;
  double script_usec = 0;
  long long commands = 0;  // everything else the server ran: the scripts' redis.call's
  double cpu_usec = 0;     // the server's CPU time (user + system, its I/O included)
  double seconds = 0;      // the client's wall time for the batch
  ServerCost& operator+=(const ServerCost& other) {
    script_calls += other.script_calls;
    script_usec += other.script_usec;
    commands += other.commands;
    cpu_usec += other.cpu_usec;
    seconds += other.seconds;
    return *this;
  }
};

/// `INFO commandstats` as command -> (calls, usec).
std::map<std::string, std::pair<long long, double>> commandStats(redis::Connection& redis) {
  auto reply = redis.command({"INFO", "commandstats"});
  if (!reply.ok()) fail("INFO: " + reply.error().message);
  std::map<std::string, std::pair<long long, double>> stats;
  std::istringstream lines{std::string(*reply->string())};
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(':');
    if (line.rfind("cmdstat_", 0) != 0 || colon == std::string::npos) continue;
    long long calls = 0;
    double usec = 0;
    std::sscanf(line.c_str() + colon + 1, "calls=%lld,usec=%lf", &calls, &usec);
    stats[line.substr(8, colon - 8)] = {calls, usec};
  }
  return stats;
}

/// The server's CPU time so far (`INFO cpu`: used_cpu_user + used_cpu_sys), in microseconds.
double serverCpuUsec(redis::Connection& redis) {
  auto reply = redis.command({"INFO", "cpu"});
  if (!reply.ok()) fail("INFO: " + reply.error().message);
  double total = 0;
  std::istringstream lines{std::string(*reply->string())};
  for (std::string line; std::getline(lines, line);) {
    for (const char* name : {"used_cpu_user:", "used_cpu_sys:"}) {
      if (line.rfind(name, 0) == 0) total += std::atof(line.c_str() + std::strlen(name)) * 1e6;
    }
  }
  return total;
}

/// Resets the server's statistics, runs `batch`, and reads what the server counted for it.
template <typename Batch>
ServerCost measure(redis::Connection& redis, Batch&& batch) {
  if (!redis.command({"CONFIG", "RESETSTAT"}).ok()) fail("CONFIG RESETSTAT failed");
  SystemClock clock;
  const double cpu = serverCpuUsec(redis);
  const MonoTime start = clock.monotonicNow();
  batch();
  ServerCost cost;
  cost.seconds = std::chrono::duration<double>(clock.monotonicNow() - start).count();
  cost.cpu_usec = serverCpuUsec(redis) - cpu;
  for (const auto& [name, value] : commandStats(redis)) {
    if (name == "evalsha" || name == "eval") {
      cost.script_calls += value.first;
      cost.script_usec += value.second;
    } else if (name != "config" && name != "info") {
      cost.commands += value.first;
    }
  }
  return cost;
}

Plan planOf(int invocations) {
  Plan plan;
  for (int i = 0; i < invocations; ++i) {
    PlannedInvocation invocation;
    invocation.app = "bench";
    invocation.handler = "bin/h" + std::to_string(i) + ".sh";
    invocation.max_attempts = 3;
    plan.invocations.push_back(invocation);
  }
  return plan;
}

std::vector<std::string> deliver(redis::Connection& redis, const std::string& stream,
                                 int messages) {
  std::vector<std::string> ids = bench::addEvents(redis, stream, messages, R"({"kind":"job"})");
  if (ids.size() != static_cast<std::size_t>(messages)) fail("XADD to " + stream + " failed");
  (void)redis.command({"XREADGROUP", "GROUP", "relay", "bench", "COUNT", std::to_string(messages),
                       "STREAMS", stream, ">"});
  return ids;
}

AttemptRecord record(const PlannedInvocation& invocation, int attempt, bool finished) {
  AttemptRecord kept;
  kept.app = invocation.app;
  kept.handler = invocation.handler;
  kept.attempt = attempt;
  kept.consumer = "bench";
  kept.started_ms = 1'767'225'600'000;
  if (finished) {
    kept.finished_ms = kept.started_ms + 3;
    kept.outcome = "succeeded";
    kept.duration_ms = 3;
  }
  return kept;
}

/// Every message through its plan: for each invocation (and, with `fail_first`, a failed first
/// attempt retried at once), one *start* batch then one *complete* batch over all messages.
std::pair<ServerCost, ServerCost> run(const redis::Endpoint& endpoint, const std::string& stream,
                                      int messages, int invocations, bool fail_first) {
  auto redis = redis::Connection::create(endpoint);
  if (!redis.ok()) fail(redis.error().message);
  RedisStoreSettings settings;
  settings.keys = StreamKeys{stream, "relay"};
  settings.consumer = "bench";
  settings.retention = std::chrono::hours(1);
  SystemClock clock;
  RedisLifecycleStore store(settings, endpoint, clock);
  // One more message than measured: its calls load the scripts.
  std::vector<std::string> ids = deliver(**redis, stream, messages + 1);
  const Plan plan = planOf(invocations);
  StartRequest request;
  request.candidate = plan;
  request.runnable.assign(plan.invocations.size(), Runnability::kReady);
  request.consumer = "bench";
  std::pair<ServerCost, ServerCost> costs;
  const auto step = [&](const std::vector<std::string>& batch, std::size_t index, int attempt,
                        bool succeeds, bool measured) {
    const PlannedInvocation& invocation = plan.invocations[index];
    const AttemptRecord started = record(invocation, attempt, false);
    const AttemptRecord finished = record(invocation, attempt, true);
    AttemptResult result;
    result.succeeded = succeeds;
    result.exit_reason = succeeds ? "" : "exit 3";
    result.output_tail = succeeds ? "" : "[bench/h] boom";
    result.duration = milliseconds(3);
    result.retry_delay = milliseconds(0);
    const auto token = [&](const std::string& id) {
      return id + "/" + std::to_string(index) + "#" + std::to_string(attempt);
    };
    const auto starts = [&] {
      for (const std::string& id : batch) {
        request.token = token(id);
        request.started = started;
        auto verdict = store.start(id, request);
        if (!verdict.ok() || verdict->kind != StartVerdict::Kind::kRun || verdict->index != index)
          fail("start of " + id + " did not claim invocation " + std::to_string(index));
      }
    };
    const auto completes = [&] {
      for (const std::string& id : batch) {
        auto verdict =
            store.complete(id, invocation.field(), token(id), result, nullptr, &finished);
        if (!verdict.ok() || verdict->kind == CompleteVerdict::Kind::kStale)
          fail("complete of " + id + " was refused");
      }
    };
    if (!measured) {
      starts();
      completes();
      return;
    }
    costs.first += measure(**redis, starts);
    costs.second += measure(**redis, completes);
  };
  const std::vector<std::string> warmup(ids.begin(), ids.begin() + 1);
  ids.erase(ids.begin());
  for (std::size_t index = 0; index < plan.invocations.size(); ++index) {
    for (bool measured : {false, true}) {
      const auto& batch = measured ? ids : warmup;
      if (fail_first) step(batch, index, 1, false, measured);
      step(batch, index, fail_first ? 2 : 1, true, measured);
    }
  }
  return costs;
}

void print(const char* name, const ServerCost& cost, double empty_usec) {
  const double calls = static_cast<double>(cost.script_calls);
  const double usec = cost.script_usec / calls;
  std::printf("%-44s %8.1f %8.2f %8.1f %9.1f %9.0f\n", name, usec, usec / empty_usec,
              cost.cpu_usec / calls,
              static_cast<double>(cost.commands) / static_cast<double>(cost.script_calls),
              static_cast<double>(cost.script_calls) / cost.seconds);
}

}  // namespace

int main(int argc, char** argv) {
  int messages = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--messages") == 0) messages = std::max(1, std::atoi(argv[i + 1]));
  }
  const char* uri = std::getenv("REDIS_URI");
  auto endpoint = redis::parseRedisUri(uri ? uri : "127.0.0.1:6379");
  if (!endpoint.ok()) fail("REDIS_URI: " + endpoint.error().message);
  auto redis = redis::Connection::create(*endpoint);
  if (!redis.ok()) fail(redis.error().message);
  // A stream of its own per run: a shared server keeps earlier runs' keys apart.
  const std::string stream = "bench-lifecycle-" + std::to_string(unixMillis(SystemClock().now()));

  const redis::Script empty("return 0");
  (void)(*redis)->eval(empty, {}, {});
  const ServerCost baseline = measure(**redis, [&] {
    for (int i = 0; i < messages; ++i) (void)(*redis)->eval(empty, {}, {});
  });
  const double empty_usec = baseline.script_usec / static_cast<double>(baseline.script_calls);

  const auto one = run(*endpoint, stream + "-1", messages, 1, false);
  const auto three = run(*endpoint, stream + "-3", messages, 3, false);
  const auto retried = run(*endpoint, stream + "-r", messages, 1, true);
  std::printf("%-44s %8s %8s %8s %9s %9s\n", "script call", "usec", "x empty", "cpu us", "commands",
              "calls/s");
  print("empty script (return 0)", baseline, empty_usec);
  print("start, 1-invocation plan", one.first, empty_usec);
  print("complete, 1-invocation plan (acks)", one.second, empty_usec);
  print("start, 3-invocation plan (each)", three.first, empty_usec);
  print("complete, 3-invocation plan (each)", three.second, empty_usec);
  print("start, 1 invocation failing once (each)", retried.first, empty_usec);
  print("complete, 1 invocation failing once (each)", retried.second, empty_usec);
  std::printf(
      "(%d messages per case; usec: the server's usec_per_call of EVALSHA from INFO "
      "commandstats, wall time, inflated when the server waits for a CPU; cpu us: the server's "
      "CPU time per call from INFO cpu, its network I/O included; commands: the commands each "
      "call ran; calls/s: one client, one at a time)\n",
      messages);
  return 0;
}
