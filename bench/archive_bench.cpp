// The archiver's throughput (docs/replay.md "Archive") against the least any copier must do,
// measured in the same run on the same Redis: a loop of XRANGE batches of 200 with one
// pipelined XADD per entry into a copy stream (no lease, no cursor, no selection). The archiver
// adds its lease and cursor scripts, the event's decoding and the patterns. Cases:
//   (a) the baseline copy loop;
//   (b) the stream's archive without a pattern: every entry copied;
//   (c) an app archive by pattern (a third of the events) beside the stream's: 1.33 copies per
//       entry, every event decoded and matched.
// Prints entries per second (read from the stream) and the ratio to (a); the archiver must
// copy faster than a busy stream grows (docs/replay.md "Gaps" otherwise).
//
//   REDIS_URI=127.0.0.1:6379 archive_bench [--entries N] [--bytes B]
//   (scripts/bench-archive starts a private redis-server)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "app/snapshot.h"
#include "common/system_clock.h"
#include "history/archiver.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "pattern/pattern_text.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "stream/stream_entry.h"

namespace {

using namespace relay;
using Clock = std::chrono::steady_clock;

constexpr const char* kStream = "bench-archive";

std::unique_ptr<redis::Connection> connect(const redis::Endpoint& endpoint) {
  auto connection = redis::Connection::create(endpoint);
  if (!connection.ok()) {
    std::cerr << "archive_bench: " << connection.error().message << "\n";
    std::exit(1);
  }
  return std::move(connection).value();
}

void fill(redis::Connection& redis, long entries, std::size_t bytes) {
  (void)redis.command({"DEL", kStream});
  std::vector<std::vector<std::string>> batch;
  const std::string pad(bytes, 'x');
  for (long i = 0; i < entries; ++i) {
    const std::string kind = i % 3 == 0 ? "order" : "view";
    batch.push_back(
        {"XADD", kStream, "*", "event",
         "{\"kind\":\"" + kind + "\",\"n\":" + std::to_string(i) + ",\"pad\":\"" + pad + "\"}"});
    if (batch.size() == 500 || i + 1 == entries) {
      (void)redis.pipeline(batch);
      batch.clear();
    }
  }
}

void clear(redis::Connection& redis) {
  const invocation::StreamKeys keys{kStream, "relay"};
  (void)redis.command({"DEL", "bench-copy", keys.archive(), keys.appArchive("shop"),
                       keys.archiver(), keys.retention()});
}

// (a): what a copier cannot avoid.
double copyLoop(redis::Connection& redis) {
  const auto start = Clock::now();
  std::string cursor = "0-0";
  for (;;) {
    auto reply = redis.command({"XRANGE", kStream, "(" + cursor, "+", "COUNT", "200"});
    if (!reply.ok()) std::exit(1);
    auto entries = stream::parseEntries(reply->view());
    if (!entries.ok() || entries->empty()) break;
    std::vector<std::vector<std::string>> adds;
    for (const auto& entry : *entries) {
      std::vector<std::string> command = {"XADD", "bench-copy", entry.id};
      for (const auto& [field, value] : entry.fields) {
        command.push_back(field);
        command.push_back(value);
      }
      adds.push_back(std::move(command));
    }
    (void)redis.pipeline(adds);
    cursor = entries->back().id;
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::shared_ptr<const app::Snapshot> shopArchive() {
  auto compiled = pattern::compileText("{kind: [order]}", "bench");
  auto pattern = std::get<std::shared_ptr<const pattern::Pattern>>(std::move(compiled));
  auto shop = std::make_shared<app::App>();
  shop->name = "shop";
  app::Rule rule;
  rule.handler = "bin/h";
  rule.pattern = pattern;
  shop->rules.push_back(rule);
  shop->archive = app::Archive{std::chrono::hours(24), pattern, "{}"};
  std::vector<app::AppEntry> apps;
  apps.push_back({"shop", "/apps/shop", shop, {}, {}, {}});
  return std::make_shared<const app::Snapshot>("/apps", std::move(apps),
                                               std::vector<app::IgnoredDir>{}, 1);
}

// (b), (c): passes until the archiver caught up.
double archive(redis::Connection& redis, std::shared_ptr<const app::Snapshot> snapshot,
               long long& copies) {
  SystemClock clock;
  observability::Metrics metrics;
  std::ostringstream log;
  observability::Logger logger(log, clock);
  history::ArchiverSettings settings;
  settings.lease = std::chrono::minutes(5);
  settings.batches_per_pass = 1'000'000;
  history::Archiver archiver(
      {kStream, "relay"}, "bench", history::StreamArchive{std::chrono::hours(24), nullptr},
      [snapshot] { return snapshot; }, settings, metrics, logger, clock);
  const auto start = Clock::now();
  copies = 0;
  for (;;) {
    auto pass = archiver.passOnce(redis);
    if (!pass.ok()) {
      std::cerr << "archive_bench: " << pass.error().message << "\n";
      std::exit(1);
    }
    copies += static_cast<long long>(pass->archived);
    if (pass->caught_up) break;
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  long entries = 50'000;
  std::size_t bytes = 200;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--entries") == 0) entries = std::max(1L, std::atol(argv[i + 1]));
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::strtoul(argv[i + 1], nullptr, 10);
  }
  const char* uri = std::getenv("REDIS_URI");
  auto endpoint = redis::parseRedisUri(uri ? uri : "127.0.0.1:6379");
  if (!endpoint.ok()) {
    std::cerr << "archive_bench: REDIS_URI: " << endpoint.error().message << "\n";
    return 2;
  }
  auto redis = connect(*endpoint);
  fill(*redis, entries, bytes);
  clear(*redis);
  const double baseline = copyLoop(*redis);
  clear(*redis);
  long long every_copies = 0;
  const double every = archive(*redis, nullptr, every_copies);
  clear(*redis);
  long long pattern_copies = 0;
  const double patterned = archive(*redis, shopArchive(), pattern_copies);
  clear(*redis);
  (void)redis->command({"DEL", kStream});

  const auto rate = [&](double seconds) { return static_cast<double>(entries) / seconds; };
  std::printf("%-62s %12s %8s %10s\n", "case", "entries/s", "copies", "x (a)");
  std::printf("%-62s %12.0f %8ld %10.2f\n", "(a) baseline: XRANGE 200 + pipelined XADD",
              rate(baseline), entries, 1.0);
  std::printf("%-62s %12.0f %8lld %10.2f\n", "(b) archiver: the stream's archive, every entry",
              rate(every), every_copies, rate(every) / rate(baseline));
  std::printf("%-62s %12.0f %8lld %10.2f\n", "(c) archiver: + an app's archive by pattern (1/3)",
              rate(patterned), pattern_copies, rate(patterned) / rate(baseline));
  std::printf("(%ld entries, events of about %zu bytes)\n", entries, bytes + 30);
  return 0;
}
