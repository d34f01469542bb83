// Per-invocation overhead of each runtime backend running a trivial handler (the sandbox cold:
// no prewarmed sandbox), printed next to a bare fork/exec and a minimal bare bwrap start
// measured in the same run (the machine is shared and noisy: compare ratios, not absolute
// numbers). The sandbox runs twice: built by bwrap and by the native launcher (docs/runtimes.md
// "Native launcher"); the last column is the bare bwrap loop's time over the row's, i.e. the
// row's rate as a multiple of the bare bwrap loop's (issue goal: >= 1.0x).
//
//   runtime_bench [--iterations N] [--docker-image IMAGE]
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/system_clock.h"
#include "config/config.h"
#include "runtime/docker/docker_runtime.h"
#include "runtime/process/process_runtime.h"
#include "runtime/sandbox/sandbox_runtime.h"

extern char** environ;

namespace {

using relay::runtime::InvocationSpec;
using relay::runtime::Language;

struct NullSink final : relay::runtime::OutputSink {
  void line(std::string_view) override {}
};

// Median wall time of `iterations` runs of `body`, in microseconds; nullopt-like -1 on failure.
double medianMicros(int iterations, const std::function<bool()>& body) {
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!body()) return -1;
    samples.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

bool spawnAndWait(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return false;
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::max(1, std::atoi(argv[i + 1]));
  }
  char pattern[] = "/tmp/relay-bench-XXXXXX";
  const std::filesystem::path app = mkdtemp(pattern);
  ::chmod(app.c_str(), 0755);
  std::filesystem::create_directories(app / "bin");
  std::ofstream(app / "bin/noop.sh") << "#!/bin/sh\nexit 0\n";
  ::chmod((app / "bin/noop.sh").c_str(), 0755);
  std::ofstream(app / "noop.py") << "def fn(event):\n    pass\n";

  relay::SystemClock clock;
  NullSink sink;
  InvocationSpec spec;
  spec.app = "bench";
  spec.app_dir = app;
  spec.handler = "bin/noop.sh";
  spec.input = "{}";
  relay::runtime::ProcessRuntime process(clock);
  relay::runtime::SandboxSettings sandbox_settings;
  sandbox_settings.launcher = RELAY_BENCH_LAUNCHER;
  // Every run starts its sandbox (a cold start): what a sandbox start costs, not a hand-over.
  sandbox_settings.prewarm = false;
  sandbox_settings.sandbox_launcher = relay::runtime::SandboxLauncher::kBwrap;
  auto sandbox = relay::runtime::SandboxRuntime::create(clock, sandbox_settings);
  sandbox_settings.sandbox_launcher = relay::runtime::SandboxLauncher::kNative;
  auto native = relay::runtime::SandboxRuntime::create(clock, sandbox_settings);

  struct Row {
    std::string name;
    double micros;
  };
  std::vector<Row> rows;
  const auto measure = [&](const std::string& name, const std::function<bool()>& body) {
    rows.push_back({name, medianMicros(iterations, body)});
  };
  measure("bare fork/exec of /bin/true", [] { return spawnAndWait({"/bin/true"}); });
  measure("process runtime, exec handler", [&] {
    auto outcome = process.run(spec, sink);
    return outcome.ok() && outcome->succeeded;
  });
  // The minimal bwrap: every namespace, /usr read-only, proc, dev, tmpfs.
  std::vector<std::string> bare_bwrap = {"/usr/bin/bwrap", "--unshare-all", "--die-with-parent",
                                         "--new-session",  "--ro-bind",     "/usr",
                                         "/usr",           "--symlink",     "usr/bin",
                                         "/bin",           "--symlink",     "usr/lib",
                                         "/lib",           "--symlink",     "usr/lib64",
                                         "/lib64",         "--proc",        "/proc",
                                         "--dev",          "/dev",          "--tmpfs",
                                         "/tmp",           "/bin/true"};
  measure("bare bwrap start of /bin/true", [&] { return spawnAndWait(bare_bwrap); });
  InvocationSpec python = spec;
  python.language = Language::kPython3;
  python.handler = "noop.fn";
  if (native->hostProblem().empty()) {
    measure("sandbox (native launcher), exec", [&] {
      auto outcome = native->run(spec, sink);
      return outcome.ok() && outcome->succeeded;
    });
    measure("sandbox (native launcher), python3", [&] {
      auto outcome = native->run(python, sink);
      return outcome.ok() && outcome->succeeded;
    });
  } else {
    std::printf("native launcher not measured: %s\n", native->hostProblem().c_str());
  }
  if (sandbox->hostProblem().empty()) {
    measure("sandbox (bwrap), exec handler", [&] {
      auto outcome = sandbox->run(spec, sink);
      return outcome.ok() && outcome->succeeded;
    });
    measure("sandbox (bwrap), python3 handler", [&] {
      auto outcome = sandbox->run(python, sink);
      return outcome.ok() && outcome->succeeded;
    });
    if (sandbox->networkProblem().empty()) {
      InvocationSpec networked = spec;
      networked.network = true;  // under pasta (docs/runtimes.md "network: true")
      measure("sandbox runtime, exec, network: true", [&] {
        auto outcome = sandbox->run(networked, sink);
        return outcome.ok() && outcome->succeeded;
      });
    } else {
      std::printf("network: true not measured: %s\n", sandbox->networkProblem().c_str());
    }
  } else {
    std::printf("sandbox runtime unavailable: %s\n", sandbox->hostProblem().c_str());
  }
  // Docker: an image with /bin/sh (scripts/lib/dockerd.sh builds relay-test/exec offline).
  relay::runtime::docker::DockerSettings docker_settings;
  // DOCKER_HOST as `relay start` reads it (the default socket when unset).
  if (const auto config =
          relay::config::loadRuntimeConfig(relay::config::processEnvironment(), "docker")) {
    docker_settings.docker_host = config->docker_host;
  }
  const char* image = std::getenv("RELAY_BENCH_DOCKER_IMAGE");
  docker_settings.default_images.exec = image ? image : "relay-test/exec:latest";
  auto docker = relay::runtime::docker::DockerRuntime::create(clock, docker_settings);
  const relay::runtime::Availability docker_available =
      docker.ok() ? (*docker)->availability(spec)
                  : relay::runtime::Availability{false, "bad DOCKER_HOST"};
  if (docker_available.available) {
    const int saved = iterations;
    iterations = std::max(1, iterations / 5);  // a container costs far more
    measure("docker runtime, exec handler", [&] {
      auto outcome = (*docker)->run(spec, sink);
      return outcome.ok() && outcome->succeeded;
    });
    const double docker_run = rows.back().micros;
    // Part of every docker run: the look-up of earlier attempts' containers to remove.
    measure("docker earlier-attempt look-up",
            [&] { return (*docker)->reaper().reapInvocation(spec.invocationId()).ok(); });
    if (docker_run > 0 && rows.back().micros > 0) {
      std::printf("docker: the earlier-attempt look-up is %.3f%% of a docker invocation\n",
                  100.0 * rows.back().micros / docker_run);
    }
    iterations = saved;
  } else {
    std::printf("docker runtime not measured: %s\n", docker_available.reason.c_str());
  }
  std::filesystem::remove_all(app);

  const double fork_exec = rows[0].micros;
  const double bwrap = rows[2].micros;
  std::printf("%-36s %12s %14s %12s %14s\n", "case", "median us", "x fork/exec", "x bwrap",
              "rate/bwrap's");
  for (const Row& row : rows) {
    if (row.micros < 0) {
      std::printf("%-36s %12s\n", row.name.c_str(), "FAILED");
      continue;
    }
    std::printf("%-36s %12.0f %14.2f %12.2f %13.2fx\n", row.name.c_str(), row.micros,
                row.micros / fork_exec, row.micros / bwrap, bwrap / row.micros);
  }
  std::printf("%d runs each, one at a time\n", iterations);
  const bool failed =
      std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.micros < 0; });
  return failed ? 1 : 0;
}
