#include "e2e/flow_cases.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "bench_stream.h"
#include "e2e/spawn_baseline.h"
#include "e2e/stream_probe.h"
#include "e2e/worker_process.h"
#include "redis/connection.h"

namespace relay::bench {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// Watches the group on its own connection until it has read `target` entries: when the workers'
// readers got through a backlog (each deferred message costs its reader one start script call).
class ReadWatch {
 public:
  ReadWatch(const redis::Endpoint& endpoint, std::string stream, long long target)
      : thread_([this, endpoint, stream = std::move(stream), target] {
          auto connection = redis::Connection::create(endpoint);
          if (!connection.ok()) return;
          StreamProbe probe(**connection, stream);
          while (!stop_) {
            if (probe.group().entries_read >= target) {
              reached_ = SteadyClock::now();
              reached_ns_ = realtimeNs();
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }) {}
  ~ReadWatch() { stop(); }
  ReadWatch(const ReadWatch&) = delete;
  ReadWatch& operator=(const ReadWatch&) = delete;

  /// Seconds from `from` until the target was read; -1 when it was not (yet).
  double secondsFrom(SteadyClock::time_point from) {
    stop();
    return reached_ ? std::chrono::duration<double>(*reached_ - from).count() : -1;
  }
  /// When the target was read, in realtime ns (the stamps' clock); 0 when it was not (yet).
  long long reachedNs() {
    stop();
    return reached_ns_;
  }

 private:
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  std::atomic<bool> stop_{false};
  std::optional<SteadyClock::time_point> reached_;
  long long reached_ns_ = 0;
  std::thread thread_;
};

// The benchmark's own connection; null with `error` set when there is none.
std::unique_ptr<redis::Connection> connect(const BenchContext& context, std::string& error) {
  auto connection = redis::Connection::create(context.redis);
  if (connection.ok()) return std::move(connection).value();
  error = "cannot connect to Redis: " + connection.error().message;
  return nullptr;
}

std::string nextStream(const std::string& name) {
  static int runs = 0;  // flow state is kept per stream: each run starts with none
  return "bench-" + name + "-" + std::to_string(++runs);
}

// How many of the stream's pending messages the parking consumer holds (docs/pipeline.md
// "Waiting").
long long parkedCount(redis::Connection& redis, const std::string& stream) {
  auto reply = redis.command({"XPENDING", stream, "relay"});
  if (!reply.ok() || reply->size() < 4) return 0;
  auto rows = reply->at(3);
  if (!rows.ok() || rows->isNil()) return 0;
  auto elements = rows->elements();
  if (!elements.ok()) return 0;
  for (const auto& row : *elements) {
    if (*row.at(0)->string() == "relay:parked")
      return std::stoll(std::string(*row.at(1)->string()));
  }
  return 0;
}

std::string tenantEvent(const char* tenant) {
  return std::string(R"({"kind":"match","tenant":")") + tenant + "\"}";
}

}  // namespace

FairnessResult fairness(const BenchContext& context, const FairnessOptions& options) {
  FairnessResult result;
  const auto connection = connect(context, result.error);
  if (!connection) return result;
  redis::Connection& redis = *connection;
  const std::string stream = nextStream(options.flood > 0 ? "fair-flood" : "fair-alone");
  StreamProbe probe(redis, stream);
  probe.fill(0, kMatchedEvent);
  const fs::path apps =
      writeApp(context, "apps-fair", {{"BENCH_SLEEP_MS", std::to_string(options.handler_ms)}}, {},
               {"concurrency: {limit: 2, key: tenant}"});
  auto workers = startWorkers(context, apps, "process", stream, context.redis.port, probe,
                              options.workers, result.error);
  if (workers.empty()) return result;
  std::optional<ReadWatch> watch;
  if (options.flood > 0) watch.emplace(context.redis, stream, options.flood);
  (void)addEvents(redis, stream, options.flood, tenantEvent("a"));
  const auto flooded = SteadyClock::now();
  if (options.queued && options.flood > 0) {
    // All of A's read, and none left in a worker's hand but its two running ones (and a
    // woken one about to start): the rest waits in the key's queue, parked.
    const auto limit = flooded + std::chrono::minutes(2);
    while (SteadyClock::now() < limit) {
      const StreamProbe::Group group = probe.group();
      if (group.entries_read >= options.flood && group.pending - parkedCount(redis, stream) <= 4) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    result.queued_s = std::chrono::duration<double>(SteadyClock::now() - flooded).count();
  }
  // B starts at once: its first events arrive while the workers read A's backlog.
  std::map<std::string, long long> added;  // id -> realtime ns just before its XADD
  const auto period = std::chrono::nanoseconds(static_cast<long long>(1e9 / options.per_second));
  auto next = SteadyClock::now();
  for (int i = 0; i < options.events; ++i) {
    std::this_thread::sleep_until(next);
    next += period;
    const long long before = realtimeNs();
    const std::string id = probe.add(tenantEvent("b"));
    if (!id.empty()) added[id] = before;
  }
  std::map<std::string, long long> stamps;
  result.b = startLatencies(workers, added, std::chrono::minutes(2), &stamps);
  if (watch) {
    result.flood_read_s = watch->secondsFrom(flooded);
    // B's behind A's backlog in the stream wait for the readers to get through it, whatever
    // the scheduling of keys; those after it show the scheduling alone.
    const long long read_ns = watch->reachedNs();
    for (const auto& [id, before] : added) {
      LatencyResult& part = read_ns == 0 || before < read_ns ? result.b_behind : result.b_after;
      const auto stamp = stamps.find(id);
      if (stamp == stamps.end()) {
        ++part.missing;
      } else {
        part.samples.push_back(static_cast<double>(stamp->second - before) / 1e6);
      }
    }
  }
  long long a_first = 0, b_last = 0;
  for (const auto& [id, ns] : stamps) {
    if (added.count(id)) {
      b_last = std::max(b_last, ns);
    } else {
      ++result.a_started;
      a_first = a_first == 0 ? ns : std::min(a_first, ns);
    }
  }
  if (a_first > 0 && b_last > a_first) result.a_started_span_s = (b_last - a_first) / 1e9;
  workers.clear();  // A's rest is left where it waits: deleted with the stream
  (void)redis.command({"DEL", stream});
  if (!result.b.error.empty()) result.error = result.b.error;
  return result;
}

ThrottleResult throttleStarts(const BenchContext& context, const ThrottleOptions& options) {
  ThrottleResult result;
  const auto connection = connect(context, result.error);
  if (!connection) return result;
  redis::Connection& redis = *connection;
  const std::string stream = nextStream("throttle");
  StreamProbe probe(redis, stream);
  probe.fill(0, kMatchedEvent);
  const fs::path apps = writeApp(context, "apps-throttle", {}, {},
                                 {"throttle: {limit: " + std::to_string(options.limit) +
                                  ", period: 1s, burst: " + std::to_string(options.burst) + "}"});
  auto workers = startWorkers(context, apps, "process", stream, context.redis.port, probe,
                              options.workers, result.error);
  if (workers.empty()) return result;
  // A quarter more than the run starts: the throttle, never the backlog, is what limits.
  result.backlog = static_cast<long>(options.limit) * options.seconds * 5 / 4 + options.burst + 50;
  ReadWatch watch(context.redis, stream, result.backlog);
  (void)addEvents(redis, stream, result.backlog, kMatchedEvent);
  const auto added = SteadyClock::now();
  const long long added_ns = realtimeNs();
  const long long span = static_cast<long long>(options.seconds) * 1'000'000'000LL;
  std::vector<long long> starts;
  long long first = 0;
  const auto deadline = added + std::chrono::seconds(options.seconds + 60);
  while (SteadyClock::now() < deadline) {
    for (auto& worker : workers) {
      for (const auto& [id, ns] : worker->takeStamps()) starts.push_back(ns);
    }
    if (!starts.empty()) first = *std::min_element(starts.begin(), starts.end());
    // Half a second past the span, so the stamps of its last starts are in the logs.
    if (first > 0 && realtimeNs() > first + span + 500'000'000LL) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  result.backlog_read_s = watch.secondsFrom(added);
  workers.clear();
  (void)redis.command({"DEL", stream});
  if (first == 0) {
    result.error = "no handler started";
    return result;
  }
  std::sort(starts.begin(), starts.end());
  result.first_start_s = static_cast<double>(first - added_ns) / 1e9;
  starts.erase(std::lower_bound(starts.begin(), starts.end(), first + span), starts.end());
  result.starts = std::move(starts);
  return result;
}

long maxInWindow(const std::vector<long long>& starts, long long window_ns) {
  long most = 0;
  std::size_t end = 0;
  for (std::size_t begin = 0; begin < starts.size(); ++begin) {
    while (end < starts.size() && starts[end] < starts[begin] + window_ns) ++end;
    most = std::max(most, static_cast<long>(end - begin));
  }
  return most;
}

}  // namespace relay::bench
