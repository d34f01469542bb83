// Due retries against fresh messages, through the real worker loops (reader, due-retry poller,
// pool) and a real Redis, with a handler that sleeps `--handler-ms` (a stand-in runtime: the
// point is the scheduling, not the process start). Prints both drain times and their ratio; both
// should be about messages * handler / concurrency.
//
//   REDIS_URI=127.0.0.1:6379 retry_bench [--messages N] [--concurrency C] [--handler-ms MS]
//   (scripts/bench-retries starts a private redis-server)
//
// Before issue 13 every reclaimed retry ran inline on the single reclaimer thread: N retries of
// an H-second handler took at least N * H seconds whatever MAX_CONCURRENCY was, and started at
// the next 1-minute sweep. That figure is printed next to the measured ones as the old lower
// bound (it is not measured: 1,000 retries would take over 16 minutes).
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "app/registry.h"
#include "bench_stream.h"
#include "catalog/registry_catalog.h"
#include "common/random.h"
#include "common/system_clock.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "stream/consumer.h"
#include "worker_rig.h"

namespace {

using namespace relay;
using std::chrono::milliseconds;

/// Succeeds after sleeping: the handler's duration without a process.
class SleepingRuntime final : public runtime::Runtime {
 public:
  SleepingRuntime(Clock& clock, milliseconds duration) : clock_(clock), duration_(duration) {}
  std::string_view name() const override { return "sleeping"; }
  Result<runtime::Outcome> run(const runtime::InvocationSpec&, runtime::OutputSink&) override {
    clock_.sleepFor(duration_);
    runtime::Outcome outcome;
    outcome.succeeded = true;
    outcome.duration = duration_;
    return outcome;
  }
  runtime::Availability availability(const runtime::InvocationSpec&) const override { return {}; }

 private:
  Clock& clock_;
  milliseconds duration_;
};

std::unique_ptr<redis::Connection> connect(const redis::Endpoint& endpoint) {
  auto connection = redis::Connection::create(endpoint);
  if (!connection.ok()) {
    std::cerr << "retry_bench: " << connection.error().message << "\n";
    std::exit(1);
  }
  return std::move(connection).value();
}

long long pending(redis::Connection& redis, const std::string& stream) {
  auto reply = redis.command({"XPENDING", stream, "relay"});
  return reply.ok() ? *reply->at(0)->integer() : -1;
}

std::vector<std::string> fill(redis::Connection& redis, const std::string& stream, int messages) {
  (void)redis.command({"DEL", stream, "relay:" + stream + ":due:relay"});
  return bench::addEvents(redis, stream, messages, R"({"kind":"job"})");
}

/// Makes every message a due retry: delivered long ago to a consumer that is gone, attempt 1
/// failed, next attempt in the past, indexed as due.
void makeDueRetries(redis::Connection& redis, const std::string& stream,
                    const std::vector<std::string>& ids) {
  (void)redis.command({"XREADGROUP", "GROUP", "relay", "gone", "COUNT", std::to_string(ids.size()),
                       "STREAMS", stream, ">"});
  const invocation::StreamKeys keys{stream, "relay"};
  std::vector<std::vector<std::string>> batch;
  for (const std::string& id : ids) {
    batch.push_back({"HSET", keys.state(id), "relay:plan", "e 5 30000 bench/bin/h.sh\n",
                     "bench/bin/h.sh", "failed:1:1000:-"});
    batch.push_back({"ZADD", keys.due(), "1000", id});
    batch.push_back({"XCLAIM", stream, "relay", "gone", "0", id, "IDLE", "120000", "JUSTID"});
  }
  (void)redis.pipeline(batch);
}

double drain(const redis::Endpoint& endpoint, const std::filesystem::path& apps,
             const std::string& stream, int concurrency, milliseconds handler, bool retries,
             int messages) {
  auto redis = connect(endpoint);
  const std::vector<std::string> ids = fill(*redis, stream, messages);
  if (retries) makeDueRetries(*redis, stream, ids);
  SystemClock clock;
  SleepingRuntime runtime(clock, handler);
  bench::WorkerRig rig(endpoint, apps, stream, runtime, concurrency);  // the binary's internals
  stream::Consumer& consumer = rig.consumer();
  observability::Metrics& metrics = rig.metrics();
  const MonoTime start = clock.monotonicNow();
  std::thread worker([&] { consumer.run(); });
  // Fresh: until everything was read and acknowledged; retries: until the PEL is empty.
  while (pending(*redis, stream) != 0 || consumer.inHand() > 0 ||
         (!retries &&
          metrics.value("relay_invocations_total",
                        {{"app", "bench"}, {"handler", "bin/h.sh"}, {"outcome", "succeeded"}}) <
              messages)) {
    clock.sleepFor(milliseconds(20));
  }
  const double seconds = std::chrono::duration<double>(clock.monotonicNow() - start).count();
  consumer.stop();
  worker.join();
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  int messages = 1000;
  int concurrency = 50;
  int handler_ms = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--messages") == 0) messages = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--concurrency") == 0) {
      concurrency = std::max(1, std::atoi(argv[i + 1]));
    }
    if (std::strcmp(argv[i], "--handler-ms") == 0) handler_ms = std::max(1, std::atoi(argv[i + 1]));
  }
  const char* uri = std::getenv("REDIS_URI");
  auto endpoint = redis::parseRedisUri(uri ? uri : "127.0.0.1:6379");
  if (!endpoint.ok()) {
    std::cerr << "retry_bench: REDIS_URI: " << endpoint.error().message << "\n";
    return 2;
  }
  char pattern[] = "/tmp/relay-retry-bench-XXXXXX";
  const std::filesystem::path apps = mkdtemp(pattern);
  std::filesystem::create_directories(apps / "bench/bin");
  std::ofstream(apps / "bench/template.yaml")
      << "runtime: exec\nconcurrency: 1024\nevents:\n  - handler: bin/h.sh\n"
         "    pattern: {kind: [job]}\n";
  std::ofstream(apps / "bench/bin/h.sh") << "#!/bin/sh\nexit 0\n";
  ::chmod((apps / "bench/bin/h.sh").c_str(), 0755);

  const milliseconds handler(handler_ms);
  const double fresh = drain(*endpoint, apps, "bench-fresh", concurrency, handler, false, messages);
  const double retries =
      drain(*endpoint, apps, "bench-retries", concurrency, handler, true, messages);
  std::filesystem::remove_all(apps);
  const double ideal = messages * (handler_ms / 1000.0) / concurrency;
  const double serial = messages * (handler_ms / 1000.0);
  std::printf("%-58s %10s %10s\n", "case", "seconds", "x fresh");
  std::printf("%-58s %10.1f %10.2f\n", "fresh messages", fresh, 1.0);
  std::printf("%-58s %10.1f %10.2f\n", "due retries (due-retry index, shared pool)", retries,
              retries / fresh);
  std::printf("%-58s %10.1f %10.2f\n", "ideal: messages * handler / MAX_CONCURRENCY", ideal,
              ideal / fresh);
  std::printf("%-58s %10.1f %10.2f\n", "before: retries inline on the reclaimer (not measured)",
              serial, serial / fresh);
  std::printf("(%d messages, a %d ms handler, MAX_CONCURRENCY=%d)\n", messages, handler_ms,
              concurrency);
  return 0;
}
