// The time from `relay cancel` to the handler's end (scripts/bench-cancel; docs/benchmarks.md
// "Cancellation"), through the real binaries against a private redis-server: `--workers` real
// `relay start` workers (process runtime) share one stream; a handler traps SIGTERM and exits,
// its child `sleep` with it. Each sample starts one handler, then either
//   - runs `relay cancel <message-id>/<app>/<handler>` (a new process: connect, one script;
//     the stop travels through the cancels stream to whichever worker runs it), or
//   - the baseline: sends SIGTERM to the handler's process group directly (what the runtime
//     itself does once told), alternately,
// and times, from just before either, until the handler's process has ended (polled in /proc
// every 200 us). The figures are p50/p99 of each and their ratio; `relay cancel`'s own run
// (until the CLI exited) is printed for attribution.
//
//   cancel_bench --relay PATH [--workers N] [--samples N]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e/bench_cases.h"
#include "e2e/bench_main.h"
#include "e2e/worker_process.h"
#include "redis/connection.h"

namespace {

using namespace relay::bench;
using Clock = std::chrono::steady_clock;

constexpr const char* kStream = "cancel-bench";
// Writes its pid where the benchmark finds it, then waits for SIGTERM (at most 60 s).
constexpr const char* kHandler =
    "#!/bin/sh\ntrap 'exit 0' TERM\nsleep 60 &\necho $$ > \"$RELAY_MESSAGE_ID.pid\"\nwait\n";

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Whether `pid` has ended (gone, or a zombie its worker has not reaped yet).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, name, state;
  if (!(stat >> pid_text >> name >> state)) return true;
  return state == "Z" || state == "X";
}

pid_t processGroup(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')');
  if (close == std::string::npos) return -1;
  char state = 0;
  int ppid = 0, pgrp = 0;
  if (std::sscanf(text.c_str() + close + 1, " %c %d %d", &state, &ppid, &pgrp) != 3) return -1;
  return pgrp;
}

// Runs `relay cancel TARGET` with the benchmark's Redis; returns when it has exited.
bool runCancel(const std::string& relay, const std::string& uri, const std::string& target) {
  const std::vector<std::string> args = {relay, "cancel", target};
  std::vector<std::string> env = {"REDIS_URI=" + uri, std::string("REDIS_STREAM=") + kStream,
                                  "PATH=/usr/bin:/bin"};
  std::vector<char*> argv, envp;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& var : env) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct Sample {
  double to_end_ms = 0;
  double cli_ms = 0;  // relay cancel only: until the CLI exited
};

void printRow(const char* what, std::vector<double> samples) {
  std::printf("  %-46s p50 %8.2f p90 %8.2f p99 %8.2f ms (%zu)\n", what, percentile(samples, 50),
              percentile(samples, 90), percentile(samples, 99), samples.size());
}

}  // namespace

int main(int argc, char** argv) {
  BenchContext context;
  int workers = 2;
  int samples = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--relay") {
      context.relay = argv[i + 1];
    } else if (flag == "--workers") {
      workers = std::atoi(argv[i + 1]);
    } else if (flag == "--samples") {
      samples = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "cancel_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  context.stamp = "-";  // no stamp handler: this benchmark's handler is a script
  if (!prepareContext(context, "cancel_bench") || workers < 1 || samples < 2) return 2;
  const std::filesystem::path apps = context.root / "apps";
  const std::filesystem::path app = apps / "stop";
  std::filesystem::create_directories(app / "bin");
  std::ofstream(app / "template.yaml")
      << "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
         "    retries: 0\n    timeout: 5m\n";
  std::ofstream(app / "bin/h.sh") << kHandler;
  std::filesystem::permissions(app / "bin/h.sh", std::filesystem::perms::owner_all |
                                                     std::filesystem::perms::group_read |
                                                     std::filesystem::perms::others_read);
  auto redis = relay::redis::Connection::create(context.redis);
  if (!redis.ok()) {
    std::fprintf(stderr, "cancel_bench: %s\n", redis.error().message.c_str());
    return 1;
  }
  (void)(*redis)->command({"DEL", kStream});
  const std::string uri = context.redis.describe();
  std::vector<std::unique_ptr<WorkerProcess>> running;
  for (int w = 0; w < workers; ++w) {
    running.push_back(
        WorkerProcess::start({.relay = context.relay,
                              .apps = apps,
                              .runtime = "process",
                              .redis_uri = uri,
                              .stream = kStream,
                              .consumer = "cancel-bench-" + std::to_string(w),
                              .max_concurrency = 4,
                              .log = context.root / ("worker" + std::to_string(w) + ".log"),
                              .image_cache = {},
                              .sandbox_launcher = {}}));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the workers read the stream
  std::printf("cancel: %d workers (relay start, process runtime), %d samples, load %s\n", workers,
              samples, loadavg().c_str());
  std::vector<double> baseline, cancelled, cli;
  for (int n = 0; n < samples; ++n) {
    auto added = (*redis)->command({"XADD", kStream, "*", "event", "{\"kind\":\"job\"}"});
    if (!added.ok()) {
      std::fprintf(stderr, "cancel_bench: XADD: %s\n", added.error().message.c_str());
      return 1;
    }
    const std::string id(*added->string());
    const std::filesystem::path pid_file = app / (id + ".pid");
    pid_t pid = 0;
    const auto started = Clock::now();
    while (pid <= 0 && msSince(started) < 20'000) {
      std::ifstream in(pid_file);
      if (!(in >> pid)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (pid <= 0) {
      std::fprintf(stderr, "cancel_bench: the handler of %s never started\n%s\n", id.c_str(),
                   running.front()->logTail().c_str());
      return 1;
    }
    // Let the handler's `wait` begin, and its claim become `running` (begin).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool direct = n % 2 == 0;
    const pid_t group = processGroup(pid);
    const auto t0 = Clock::now();
    double cli_ms = -1;
    if (direct) {
      ::kill(group > 0 ? -group : pid, SIGTERM);
    } else {
      if (!runCancel(context.relay, uri, id + "/stop/bin/h.sh")) {
        std::fprintf(stderr, "cancel_bench: relay cancel %s failed\n", id.c_str());
        return 1;
      }
      cli_ms = msSince(t0);
    }
    while (!ended(pid) && msSince(t0) < 10'000) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const double to_end = msSince(t0);
    (direct ? baseline : cancelled).push_back(to_end);
    if (cli_ms >= 0) cli.push_back(cli_ms);
    // The next sample starts once this message is finished (acknowledged).
    const auto settle = Clock::now();
    while (msSince(settle) < 10'000) {
      auto pending = (*redis)->command({"XPENDING", kStream, "relay"});
      if (pending.ok() && pending->at(0).ok() && *pending->at(0)->integer() == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::filesystem::remove(pid_file);
  }
  printRow("SIGTERM to the handler's group -> its end", baseline);
  printRow("relay cancel -> the handler's end", cancelled);
  printRow("  of which relay cancel's own run (CLI exit)", cli);
  std::printf("  ratio relay cancel / direct SIGTERM: p50 %.1fx, p99 %.1fx\n",
              percentile(cancelled, 50) / percentile(baseline, 50),
              percentile(cancelled, 99) / percentile(baseline, 99));
  std::filesystem::remove_all(context.root);
  return 0;
}
