// Messages per second through Relay's pipeline, next to the raw XREADGROUP+XACK rate of the
// same Redis measured in the same run (the machines are shared and noisy: compare ratios).
//
//   REDIS_URI=127.0.0.1:6379 pipeline_bench [--messages N]    (scripts/bench-pipeline starts
//                                                              a private redis-server)
// Cases: raw XREADGROUP COUNT 10 + XACK; unmatched events (decode + classify + XACK); matched
// events with a no-op exec handler on the process runtime (the whole invocation lifecycle).
#include <sys/stat.h>
#include <unistd.h>

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
#include "runtime/process/process_runtime.h"
#include "stream/consumer.h"
#include "worker_rig.h"

namespace {

using namespace relay;
using Clock = std::chrono::steady_clock;

std::unique_ptr<redis::Connection> connect(const redis::Endpoint& endpoint) {
  auto connection = redis::Connection::create(endpoint);
  if (!connection.ok()) {
    std::cerr << "pipeline_bench: " << connection.error().message << "\n";
    std::exit(1);
  }
  return std::move(connection).value();
}

void fill(redis::Connection& redis, const std::string& stream, int messages,
          const std::string& event) {
  (void)redis.command({"DEL", stream});
  (void)bench::addEvents(redis, stream, messages, event);
}

long long pending(redis::Connection& redis, const std::string& stream) {
  auto reply = redis.command({"XPENDING", stream, "relay"});
  return reply.ok() ? *reply->at(0)->integer() : -1;
}

long long lag(redis::Connection& redis, const std::string& stream) {
  // Entries not yet delivered to the group.
  auto reply = redis.command({"XINFO", "GROUPS", stream});
  if (!reply.ok()) return -1;
  auto group = reply->at(0);
  auto fields = group->elements();
  for (std::size_t i = 0; i + 1 < fields->size(); i += 2) {
    if (*(*fields)[i].string() == "lag") return *(*fields)[i + 1].integer();
  }
  return -1;
}

// `ack_each`: one XACK round trip per message (what a message-at-a-time worker pays) instead
// of one per batch of ten.
double rawRate(const redis::Endpoint& endpoint, int messages, bool ack_each) {
  auto redis = connect(endpoint);
  fill(*redis, "bench-raw", messages, R"({"kind":"x"})");
  const auto start = Clock::now();
  int done = 0;
  while (done < messages) {
    auto reply = redis->command(
        {"XREADGROUP", "GROUP", "relay", "raw", "COUNT", "10", "STREAMS", "bench-raw", ">"});
    auto entries = reply->at(0)->at(1)->elements();
    std::vector<std::string> ack = {"XACK", "bench-raw", "relay"};
    for (const auto& entry : *entries) {
      if (ack_each) {
        (void)redis->command({"XACK", "bench-raw", "relay", *entry.at(0)->string()});
      } else {
        ack.emplace_back(*entry.at(0)->string());
      }
    }
    if (!ack_each) (void)redis->command(ack);
    done += static_cast<int>(entries->size());
  }
  return messages / std::chrono::duration<double>(Clock::now() - start).count();
}

struct PipelineRun {
  double rate = 0;                         // messages per second
  double classifications_per_message = 0;  // decode + match calls per message
};

PipelineRun pipelineRate(const redis::Endpoint& endpoint, const std::filesystem::path& apps,
                         const std::string& stream, int messages, const std::string& event) {
  auto redis = connect(endpoint);
  fill(*redis, stream, messages, event);
  SystemClock clock;
  runtime::ProcessRuntime runtime(clock);
  stream::ConsumerSettings consumer_settings;
  consumer_settings.block = std::chrono::milliseconds(50);
  bench::WorkerRig rig(endpoint, apps, stream, runtime, 16, consumer_settings);
  stream::Consumer& consumer = rig.consumer();
  const auto start = Clock::now();
  std::thread worker([&] { consumer.run(); });
  while (lag(*redis, stream) != 0 || pending(*redis, stream) != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  consumer.stop();
  worker.join();
  return {messages / seconds, static_cast<double>(rig.classifications()) / messages};
}

}  // namespace

int main(int argc, char** argv) {
  int messages = 5000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--messages") == 0) messages = std::max(10, std::atoi(argv[i + 1]));
  }
  const char* uri = std::getenv("REDIS_URI");
  auto endpoint = redis::parseRedisUri(uri ? uri : "127.0.0.1:6379");
  if (!endpoint.ok()) {
    std::cerr << "pipeline_bench: REDIS_URI: " << endpoint.error().message << "\n";
    return 2;
  }
  char pattern[] = "/tmp/relay-pipeline-bench-XXXXXX";
  const std::filesystem::path apps = mkdtemp(pattern);
  std::filesystem::create_directories(apps / "bench/bin");
  std::ofstream(apps / "bench/template.yaml")
      << "runtime: exec\nconcurrency: 16\nevents:\n  - handler: bin/noop.sh\n"
         "    pattern: {kind: [match]}\n";
  std::ofstream(apps / "bench/bin/noop.sh") << "#!/bin/sh\nexit 0\n";
  ::chmod((apps / "bench/bin/noop.sh").c_str(), 0755);

  const double raw = rawRate(*endpoint, messages, false);
  const double raw_each = rawRate(*endpoint, messages, true);
  const PipelineRun unmatched =
      pipelineRate(*endpoint, apps, "bench-unmatched", messages, R"({"kind":"other","n":1})");
  const int matched_messages = std::max(10, messages / 10);  // each runs a process
  const PipelineRun matched =
      pipelineRate(*endpoint, apps, "bench-matched", matched_messages, R"({"kind":"match","n":1})");
  std::filesystem::remove_all(apps);

  std::printf("%-52s %12s %12s\n", "case", "msgs/s", "x raw");
  std::printf("%-52s %12.0f %12.2f\n", "raw XREADGROUP COUNT 10 + XACK (1 connection)", raw, 1.0);
  std::printf("%-52s %12.0f %12.2f\n", "raw XREADGROUP COUNT 10 + one XACK per message", raw_each,
              raw_each / raw);
  std::printf("%-52s %12.0f %12.2f\n", "unmatched: decode + classify + XACK", unmatched.rate,
              unmatched.rate / raw);
  std::printf("%-52s %12.0f %12.4f\n", "matched: no-op exec handler, process runtime", matched.rate,
              matched.rate / raw);
  // A delivery is decoded and matched once, on the reader's thread, and its classification
  // travels with it to the pool (docs/pipeline.md "Acknowledgements in batches").
  std::printf("decode + match per message: unmatched %.2f, matched %.2f\n",
              unmatched.classifications_per_message, matched.classifications_per_message);
  std::printf("(%d messages, %d matched; worker: 16 messages in hand, a pool of 16 threads)\n",
              messages, matched_messages);
  return 0;
}
