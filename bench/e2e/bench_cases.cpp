#include "e2e/bench_cases.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <thread>

#include "common/system_clock.h"
#include "e2e/spawn_baseline.h"
#include "e2e/stream_probe.h"
#include "e2e/worker_process.h"
#include "http/client.h"
#include "redis/connection.h"
#include "runtime/child_process.h"
#include "runtime/docker/docker_api.h"
#include "runtime/handler_command.h"
#include "runtime/image/image_cache.h"
#include "runtime/sandbox/bwrap_command.h"
#include "runtime/sandbox/sandbox_probe.h"
#include "runtime/sandbox/sandbox_settings.h"
#include "runtime/sandbox/seccomp_filter.h"

namespace relay::bench {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

std::unique_ptr<redis::Connection> connect(const redis::Endpoint& endpoint) {
  auto connection = redis::Connection::create(endpoint);
  return connection.ok() ? std::move(connection).value() : nullptr;
}

std::string uriOf(const redis::Endpoint& endpoint, int port) {
  return endpoint.host + ":" + std::to_string(port);
}

template <typename T>
T failure(std::string error) {
  T result;
  result.error = std::move(error);
  return result;
}

WorkerProcess::Options workerOptions(const BenchContext& context, const fs::path& apps,
                                     const std::string& runtime, const std::string& stream,
                                     int port, const std::string& consumer) {
  WorkerProcess::Options options;
  options.relay = context.relay;
  options.apps = apps;
  options.runtime = runtime;
  // "sandbox-native", "sandbox-bwrap": the sandbox runtime with that launcher (docs/runtimes.md
  // "Native launcher"); plain "sandbox" lets Relay choose.
  if (runtime.rfind("sandbox-", 0) == 0) {
    options.runtime = "sandbox";
    options.sandbox_launcher = runtime.substr(8);
  }
  options.redis_uri = uriOf(context.redis, port);
  options.stream = stream;
  options.consumer = consumer;
  options.max_concurrency = context.concurrency;
  options.log = context.root / (stream + "-" + consumer + ".log");
  options.image_cache = context.image_cache;
  return options;
}

// Waits (at most 60 s) until `ready` says the workers are reading; false with `error` set when
// one exits or the time is up.
bool awaitReading(const std::vector<std::unique_ptr<WorkerProcess>>& workers,
                  const std::function<bool()>& ready, std::string& error) {
  const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (!ready()) {
    for (const auto& worker : workers) {
      if (!worker->running() || SteadyClock::now() > deadline) {
        error = "the worker did not start reading: " + worker->logTail();
        return false;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // An app the worker cannot run (a runtime unavailable here: no bwrap, a relay copied without
  // relay-launcher beside it) leaves every message pending: a drain would wait its whole
  // deadline for nothing. The worker logged each app's availability before it read.
  for (const auto& worker : workers) {
    const std::string log = worker->logTail(1 << 16);
    const auto unavailable = log.find("available=false");
    if (unavailable != std::string::npos) {
      const auto newline = log.rfind('\n', unavailable);
      const auto from = newline == std::string::npos ? 0 : newline + 1;
      const auto end = log.find('\n', unavailable);
      error = "an app of the bench is unavailable to the worker: " +
              log.substr(from, end == std::string::npos ? std::string::npos : end - from);
      return false;
    }
  }
  return true;
}

// Starts a worker and waits until it has read from the group (at most 60 s).
std::unique_ptr<WorkerProcess> startWorker(const BenchContext& context, const fs::path& apps,
                                           const std::string& runtime, const std::string& stream,
                                           int port, StreamProbe& probe, std::string& error) {
  const WorkerProcess::Options options =
      workerOptions(context, apps, runtime, stream, port, "bench");
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  workers.push_back(WorkerProcess::start(options));
  if (!workers.back()) {
    error = "cannot start " + context.relay;
    return nullptr;
  }
  if (!awaitReading(
          workers, [&] { return probe.hasConsumer(options.consumer); }, error)) {
    return nullptr;
  }
  return std::move(workers.back());
}

}  // namespace

std::vector<std::unique_ptr<WorkerProcess>> startWorkers(
    const BenchContext& context, const fs::path& apps, const std::string& runtime,
    const std::string& stream, int port, StreamProbe& probe, int count, std::string& error) {
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  for (int i = 0; i < count; ++i) {
    const std::string consumer = i == 0 ? "bench" : "bench-" + std::to_string(i + 1);
    workers.push_back(
        WorkerProcess::start(workerOptions(context, apps, runtime, stream, port, consumer)));
    if (!workers.back()) {
      error = "cannot start " + context.relay;
      return {};
    }
  }
  // On an empty stream each worker's one reader blocks in XREADGROUP.
  if (!awaitReading(
          workers, [&] { return probe.blockedReaders() >= count; }, error))
    return {};
  return workers;
}

Target targetOf(const BenchContext& context, const std::string& name) {
  if (name == "docker") return {"docker", context.docker_image};
  if (name == "sandbox+image") return {"sandbox", context.docker_image};
  return {name, ""};
}

fs::path writeApp(const BenchContext& context, const std::string& name,
                  const std::map<std::string, std::string>& env, const std::string& image,
                  const std::vector<std::string>& rule) {
  const fs::path apps = context.root / name;
  fs::create_directories(apps / "bench/bin");
  std::ofstream yaml(apps / "bench/template.yaml");
  yaml << "runtime: exec\nconcurrency: " << context.concurrency << "\n";
  if (!image.empty()) yaml << "image: " << image << "\n";
  if (!env.empty()) {
    yaml << "env:\n";
    for (const auto& [key, value] : env) yaml << "  " << key << ": \"" << value << "\"\n";
  }
  yaml << "events:\n  - handler: bin/stamp\n    timeout: 1m\n    pattern: {kind: [match]}\n";
  for (const std::string& line : rule) yaml << "    " << line << "\n";
  fs::copy_file(context.stamp, apps / "bench/bin/stamp", fs::copy_options::overwrite_existing);
  for (const fs::path& dir : {apps, apps / "bench", apps / "bench/bin"}) ::chmod(dir.c_str(), 0755);
  ::chmod((apps / "bench/template.yaml").c_str(), 0644);
  ::chmod((apps / "bench/bin/stamp").c_str(), 0755);
  return apps;
}

long long machineSwitches() {
  std::ifstream stat("/proc/stat");
  std::string name;
  long long value = 0;
  while (stat >> name) {
    if (name == "ctxt" && stat >> value) return value;
    stat.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

double redisCpuSeconds(redis::Connection& redis) {
  auto reply = redis.command({"INFO", "cpu"});
  if (!reply.ok() || !reply->string().ok()) return -1;
  const std::string text(*reply->string());
  double total = 0;
  for (const char* field : {"used_cpu_user:", "used_cpu_sys:"}) {
    const std::size_t at = text.find(field);
    if (at == std::string::npos) return -1;
    total += std::strtod(text.c_str() + at + std::strlen(field), nullptr);
  }
  return total;
}

namespace {

// What one readAndAck() read: the ids (none when a BLOCK ended empty) and CLOCK_REALTIME as the
// read's reply arrived, before the XACK.
struct AckedRead {
  std::vector<std::string> ids;
  long long at_ns = 0;
};

// One XREADGROUP of group `relay` as `consumer` (COUNT 10, BLOCK `block_ms` when given) and one
// XACK of what it brought.
redis::Result<AckedRead> readAndAck(redis::Connection& redis, const std::string& stream,
                                    const std::string& consumer, int block_ms = -1) {
  std::vector<std::string> read = {"XREADGROUP", "GROUP", "relay", consumer, "COUNT", "10"};
  if (block_ms >= 0) read.insert(read.end(), {"BLOCK", std::to_string(block_ms)});
  read.insert(read.end(), {"STREAMS", stream, ">"});
  auto reply = redis.command(read);
  AckedRead result;
  result.at_ns = realtimeNs();
  if (!reply.ok()) return reply.error();
  if (reply->isNil()) return result;
  auto entries = reply->at(0)->at(1)->elements();
  std::vector<std::string> ack = {"XACK", stream, "relay"};
  for (const auto& entry : *entries) result.ids.emplace_back(*entry.at(0)->string());
  ack.insert(ack.end(), result.ids.begin(), result.ids.end());
  auto acked = redis.command(ack);
  if (!acked.ok()) return acked.error();
  return result;
}

}  // namespace

double rawReadAckRate(const BenchContext& context, long messages) {
  auto redis = connect(context.redis);
  if (!redis) return 0;
  StreamProbe probe(*redis, "bench-raw");
  probe.fill(messages, kUnmatchedEvent);
  const auto start = SteadyClock::now();
  long done = 0;
  while (done < messages) {
    auto read = readAndAck(*redis, "bench-raw", "raw");
    if (!read.ok()) return 0;
    done += static_cast<long>(read->ids.size());
  }
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  (void)redis->command({"DEL", "bench-raw"});
  return static_cast<double>(messages) / seconds;
}

constexpr const char* kTransitionsKey = "bench-transitions";

SpawnerStep durableTransitions(const BenchContext& context) {
  return [endpoint = context.redis]() -> std::function<bool()> {
    const redis::Script record("redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1");
    std::shared_ptr<redis::Connection> redis = connect(endpoint);
    // Loaded before the clock starts: every call of the run is an EVALSHA that hits.
    if (!redis || !redis->command({"SCRIPT", "LOAD", record.source()}).ok()) {
      return [] { return false; };
    }
    return [redis, record, field = std::to_string(::getpid()), transitions = 0LL]() mutable {
      return redis->eval(record, {kTransitionsKey}, {field, std::to_string(++transitions)}).ok();
    };
  };
}

void dropTransitions(const BenchContext& context) {
  if (auto redis = connect(context.redis)) (void)redis->command({"DEL", kTransitionsKey});
}

DrainResult workerDrain(const BenchContext& context, const std::string& runtime,
                        const std::string& event, long messages, bool through_proxy,
                        const std::vector<std::string>& rule, bool until_read) {
  DrainResult result;
  auto redis = connect(context.redis);
  if (!redis) return failure<DrainResult>("cannot connect to Redis");
  const std::string stream = "bench-drain-" + runtime + (through_proxy ? "-proxied" : "");
  StreamProbe probe(*redis, stream);
  probe.fill(messages, event);
  std::unique_ptr<CountingProxy> proxy;
  if (through_proxy) proxy = CountingProxy::start(context.redis.host, context.redis.port);
  const Target target = targetOf(context, runtime);
  const fs::path apps =
      writeApp(context, "apps-drain-" + runtime, {{"BENCH_QUIET", "1"}}, target.image, rule);
  std::string error;
  auto worker = startWorker(context, apps, target.runtime, stream,
                            proxy ? proxy->port() : context.redis.port, probe, error);
  if (!worker) return failure<DrainResult>(error);
  WorkerProcess::Cpu cpu_start;
  CountingProxy::Counts counts_start;
  long long switches_start = 0;
  double redis_cpu_start = 0;
  const auto drain = probe.drain(
      messages, std::chrono::minutes(10), [&] { return worker->running(); },
      [&](bool at_start) {
        const WorkerProcess::Cpu cpu = worker->cpu();
        const long long switches = machineSwitches();
        const double redis_cpu = redisCpuSeconds(*redis);  // between the probe's calls
        if (at_start) {
          cpu_start = cpu;
          if (proxy) counts_start = proxy->counts();
          switches_start = switches;
          redis_cpu_start = redis_cpu;
          return;
        }
        result.switches = static_cast<double>(switches - switches_start);
        result.redis_cpu_ms = (redis_cpu - redis_cpu_start) * 1000;
        result.cpu_self_ms = (cpu.self - cpu_start.self) * 1000;
        result.cpu_children_ms = (cpu.children - cpu_start.children) * 1000;
        if (proxy) result.redis = proxy->counts() - counts_start;
      },
      until_read);
  if (!drain.complete || drain.messages <= 0) {
    return failure<DrainResult>(runtime + " worker did not drain the stream: " + worker->logTail());
  }
  result.rate = drain.rate;
  result.window_messages = drain.messages;
  result.cpu_self_ms /= static_cast<double>(drain.messages);
  result.cpu_children_ms /= static_cast<double>(drain.messages);
  result.switches /= static_cast<double>(drain.messages);
  result.redis_cpu_ms /= static_cast<double>(drain.messages);
  worker.reset();
  (void)redis->command({"DEL", stream});
  return result;
}

namespace {

// `events` matched events added at a steady `per_second`: id -> realtime ns just before its XADD.
std::map<std::string, long long> pacedAdds(StreamProbe& probe, double per_second, int events) {
  std::map<std::string, long long> added;
  const auto period = std::chrono::nanoseconds(static_cast<long long>(1e9 / per_second));
  auto next = SteadyClock::now();
  for (int i = 0; i < events; ++i) {
    std::this_thread::sleep_until(next);
    next += period;
    const long long before = realtimeNs();
    const std::string id = probe.add(kMatchedEvent);
    if (!id.empty()) added[id] = before;
  }
  return added;
}

}  // namespace

LatencyResult workerLatency(const BenchContext& context, const std::string& runtime,
                            double per_second, int events, const std::vector<std::string>& rule) {
  auto redis = connect(context.redis);
  if (!redis) return failure<LatencyResult>("cannot connect to Redis");
  const std::string stream = "bench-latency-" + runtime;
  StreamProbe probe(*redis, stream);
  probe.fill(0, kMatchedEvent);
  const Target target = targetOf(context, runtime);
  const fs::path apps = writeApp(context, "apps-latency-" + runtime, {}, target.image, rule);
  std::string error;
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  workers.push_back(
      startWorker(context, apps, target.runtime, stream, context.redis.port, probe, error));
  if (!workers.back()) return failure<LatencyResult>(error);
  const std::map<std::string, long long> added = pacedAdds(probe, per_second, events);
  LatencyResult result = startLatencies(workers, added, std::chrono::minutes(5));
  workers.clear();
  (void)redis->command({"DEL", stream});
  return result;
}

LatencyResult bareReadLatency(const BenchContext& context, double per_second, int events) {
  auto writer = connect(context.redis);
  auto reader = connect(context.redis);
  if (!writer || !reader) return failure<LatencyResult>("cannot connect to Redis");
  const std::string stream = "bench-latency-read";
  StreamProbe probe(*writer, stream);
  probe.fill(0, kMatchedEvent);
  // The reader's clock, read as each reply arrives (before the reply is looked at), by id.
  std::map<std::string, long long> read;
  std::string error;
  std::thread thread([&] {
    const auto give_up = SteadyClock::now() + std::chrono::minutes(2);
    while (static_cast<int>(read.size()) < events && SteadyClock::now() < give_up) {
      auto got = readAndAck(*reader, stream, "bare", 1000);
      if (!got.ok()) {
        error = got.error().message;
        return;
      }
      for (const std::string& id : got->ids) read[id] = got->at_ns;
    }
  });
  for (int waited = 0; waited < 5000 && probe.blockedReaders() < 1; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::map<std::string, long long> added = pacedAdds(probe, per_second, events);
  thread.join();
  (void)writer->command({"DEL", stream});
  LatencyResult result;
  result.error = error;
  for (const auto& [id, before] : added) {
    const auto at = read.find(id);
    if (at == read.end()) {
      ++result.missing;
    } else {
      result.samples.push_back(static_cast<double>(at->second - before) / 1e6);
    }
  }
  return result;
}

LatencyResult startLatencies(std::vector<std::unique_ptr<WorkerProcess>>& workers,
                             const std::map<std::string, long long>& added,
                             std::chrono::seconds limit,
                             std::map<std::string, long long>* all_stamps) {
  LatencyResult result;
  std::map<std::string, long long> own;
  std::map<std::string, long long>& stamps = all_stamps ? *all_stamps : own;
  const auto take = [&] {
    for (auto& worker : workers) stamps.merge(worker->takeStamps());
  };
  const auto found = [&] {
    return std::all_of(added.begin(), added.end(),
                       [&](const auto& entry) { return stamps.count(entry.first) > 0; });
  };
  const auto alive = [&] {
    return std::any_of(workers.begin(), workers.end(), [](const auto& w) { return w->running(); });
  };
  const auto deadline = SteadyClock::now() + limit;
  for (take(); !found() && SteadyClock::now() < deadline && alive(); take()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const auto& [id, before] : added) {
    const auto stamp = stamps.find(id);
    if (stamp == stamps.end()) {
      ++result.missing;
      continue;
    }
    result.samples.push_back(static_cast<double>(stamp->second - before) / 1e6);
  }
  if (result.samples.empty()) {
    result.error = "no handler started: " + (workers.empty() ? "" : workers[0]->logTail());
  }
  return result;
}

MemoryResult workerMemory(const BenchContext& context, long backlog) {
  MemoryResult result;
  auto redis = connect(context.redis);
  if (!redis) return failure<MemoryResult>("cannot connect to Redis");
  StreamProbe idle_probe(*redis, "bench-idle");
  idle_probe.fill(0, kMatchedEvent);
  const fs::path apps = writeApp(context, "apps-memory", {{"BENCH_SLEEP_MS", "2000"}});
  std::string error;
  {
    auto worker =
        startWorker(context, apps, "process", "bench-idle", context.redis.port, idle_probe, error);
    if (!worker) return failure<MemoryResult>(error);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    result.idle_kib = worker->rssKib();
  }
  (void)redis->command({"DEL", "bench-idle"});
  StreamProbe probe(*redis, "bench-backlog");
  probe.fill(backlog, kMatchedEvent);
  auto worker =
      startWorker(context, apps, "process", "bench-backlog", context.redis.port, probe, error);
  if (!worker) return failure<MemoryResult>(error);
  std::this_thread::sleep_for(std::chrono::seconds(6));  // a few handler generations
  result.backlog_kib = worker->rssKib();
  result.backlog_peak_kib = worker->peakRssKib();
  result.in_hand = probe.group().pending;
  worker.reset();
  (void)redis->command({"DEL", "bench-backlog"});
  return result;
}

BareCommands bareCommands(const BenchContext& context) {
  const fs::path apps = writeApp(context, "apps-bare", {});
  const std::string app = (apps / "bench").string();
  BareCommands commands;
  commands.process = {app + "/bin/stamp"};
  commands.bwrap = {"/usr/bin/bwrap", "--unshare-all", "--die-with-parent",
                    "--new-session",  "--cap-drop",    "ALL",
                    "--uid",          "65534",         "--gid",
                    "65534"};
  for (const char* path : {"/usr", "/etc/ld.so.cache"}) {
    commands.bwrap.insert(commands.bwrap.end(), {"--ro-bind", path, path});
  }
  for (const char* top : {"/bin", "/lib", "/lib64"}) {
    std::error_code ec;
    if (fs::is_symlink(top, ec)) {
      commands.bwrap.insert(commands.bwrap.end(),
                            {"--symlink", fs::read_symlink(top, ec).string(), top});
    }
  }
  commands.bwrap.insert(commands.bwrap.end(),
                        {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", app,
                         "/app", "--chdir", "/app", "--", "/app/bin/stamp"});
  // Relay's own sandbox options for the same handler, built by Relay's code.
  relay::runtime::SandboxSettings settings;
  relay::runtime::SandboxTools tools;
  if (auto bwrap = relay::runtime::findExecutable("bwrap", settings.search_path)) {
    relay::SystemClock clock;
    tools.bwrap = *bwrap;
    tools.bwrap_disable_userns = relay::runtime::bwrapSupports(*bwrap, "--disable-userns", clock);
    auto seccomp = relay::runtime::SeccompFilter::build();
    if (seccomp.ok()) {
      relay::runtime::InvocationSpec spec;
      spec.app = "bench";
      spec.app_dir = app;
      spec.handler = "bin/stamp";
      // As the app's own sandbox user, inside and outside (docs/runtimes.md "Identities").
      commands.relay_id = relay::runtime::SandboxIdentities(settings.ids).of(spec.app);
      commands.relay_bwrap = relay::runtime::sandboxArgv(settings, tools, spec, commands.relay_id);
      commands.relay_seccomp = std::move(seccomp).value();
    }
  }
  if (::access("/usr/bin/docker", X_OK) != 0) {
    commands.docker_problem = "no /usr/bin/docker";
  } else if (std::system(
                 ("/usr/bin/docker image inspect " + context.docker_image + " >/dev/null 2>&1")
                     .c_str()) != 0) {
    commands.docker_problem = "image " + context.docker_image + " missing or no daemon";
  } else {
    const std::vector<std::string> options = {"--network",
                                              "none",
                                              "--read-only",
                                              "--mount",
                                              "type=bind,src=" + app + ",dst=/app,readonly",
                                              "-e",
                                              "RELAY_MESSAGE_ID=bare",
                                              context.docker_image,
                                              "/app/bin/stamp"};
    commands.docker = {"/usr/bin/docker", "run", "--rm"};
    commands.docker.insert(commands.docker.end(), options.begin(), options.end());
    commands.docker_create = {"/usr/bin/docker", "create"};
    commands.docker_create.insert(commands.docker_create.end(), options.begin(), options.end());
  }
  return commands;
}

UnpackResult unpackImage(const BenchContext& context, const std::string& image) {
  UnpackResult result;
  relay::SystemClock clock;
  const char* host = std::getenv("DOCKER_HOST");
  const std::string docker_host = host != nullptr && *host ? host : "unix:///var/run/docker.sock";
  runtime::docker::DockerApi api(
      http::Client(http::UnixSocket{docker_host.substr(7)}, clock, "docker daemon"),
      std::chrono::seconds(60));
  runtime::image::ImageCacheSettings settings;
  settings.dir = context.root / ("unpack-" + std::to_string(std::hash<std::string>{}(image)));
  auto cache = runtime::image::ImageCache::create(settings, clock, &api);
  if (!cache.ok()) return failure<UnpackResult>(cache.error().message);
  const auto start = SteadyClock::now();
  auto root = (*cache)->acquire(image);
  result.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!root.ok()) return failure<UnpackResult>(root.error().message);
  result.cache_bytes = (*root)->bytes();
  const std::string size_command =
      "/usr/bin/docker image inspect --format '{{.Size}}' " + image + " 2>/dev/null";
  if (FILE* pipe = ::popen(size_command.c_str(), "r")) {
    unsigned long long size = 0;
    if (std::fscanf(pipe, "%llu", &size) == 1) result.image_bytes = size;
    ::pclose(pipe);
  }
  root->reset();
  std::error_code ec;
  fs::remove_all(settings.dir, ec);
  return result;
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return -1;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * samples.size()));
  return samples[std::min(samples.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace relay::bench
