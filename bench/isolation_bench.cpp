// Fixed costs of the sandbox's isolation, each next to its bare baseline measured in the same
// run (the machine is shared and noisy: compare ratios, not absolute numbers):
//   - installing the seccomp program in a new process, binary tree and linear layout, against
//     a fork alone (the kernel runs the program for every call number of every ABI at install
//     time to build its action cache, so the layout is paid by every sandboxed handler);
//   - one invocation cgroup made with its limits and destroyed, against the bare mkdir + rmdir
//     of a directory per controller (run as root on a host with cgroups; skipped otherwise).
// CPU is counted as well as wall time: under a backlog the sandbox is CPU-bound.
//
//   isolation_bench [--iterations N]
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/system_clock.h"
#include "runtime/sandbox/cgroup.h"
#include "runtime/sandbox/seccomp_filter.h"

namespace {

namespace fs = std::filesystem;
using relay::runtime::SeccompFilter;
using relay::runtime::SeccompLayout;

double cpuMicros(int who) {
  rusage usage{};
  ::getrusage(who, &usage);
  const auto micros = [](const timeval& t) { return t.tv_sec * 1e6 + t.tv_usec; };
  return micros(usage.ru_utime) + micros(usage.ru_stime);
}

struct Row {
  std::string name;
  double wall_median = -1;  // microseconds
  double cpu_mean = -1;     // microseconds of this process and its children per run
};

Row measure(const std::string& name, int iterations, const std::function<bool()>& body) {
  std::vector<double> samples;
  const double cpu_before = cpuMicros(RUSAGE_SELF) + cpuMicros(RUSAGE_CHILDREN);
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!body()) return {name};
    samples.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  const double cpu = cpuMicros(RUSAGE_SELF) + cpuMicros(RUSAGE_CHILDREN) - cpu_before;
  std::sort(samples.begin(), samples.end());
  return {name, samples[samples.size() / 2], cpu / iterations};
}

// Forks a child that installs `program` (none when empty) the way bwrap does and exits.
bool forkAndInstall(const std::string* program) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (program != nullptr) {
      sock_fprog fprog{static_cast<unsigned short>(program->size() / sizeof(sock_filter)),
                       reinterpret_cast<sock_filter*>(const_cast<char*>(program->data()))};
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(1);
      if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) ::_exit(2);
    }
    ::_exit(0);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

void print(const std::vector<Row>& rows, std::size_t baseline, const char* baseline_name) {
  std::printf("%-44s %10s %10s %12s %12s\n", "case", "median us", "cpu us", "x wall", "x cpu");
  for (const Row& row : rows) {
    if (row.wall_median < 0) {
      std::printf("%-44s %10s\n", row.name.c_str(), "FAILED");
      continue;
    }
    std::printf("%-44s %10.0f %10.0f %12.2f %12.2f\n", row.name.c_str(), row.wall_median,
                row.cpu_mean, row.wall_median / rows[baseline].wall_median,
                row.cpu_mean / rows[baseline].cpu_mean);
  }
  std::printf("(ratios against \"%s\")\n\n", baseline_name);
}

bool anyFailed(const std::vector<Row>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.wall_median < 0; });
}

/// One benchmark case: its name and one run of it (false when it failed).
struct Case {
  std::string name;
  std::function<bool()> body;
};

// Each case measured in alternated rounds (the neighbours' load drifts during a run),
// `iterations` runs in all: per case, the median of its rounds' medians and of their CPU means
// (failed when any of its rounds failed).
std::vector<Row> measureAlternated(const std::vector<Case>& cases, int iterations) {
  constexpr int kRounds = 5;
  std::vector<std::vector<Row>> rounds(cases.size());
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      rounds[i].push_back(measure(cases[i].name, std::max(1, iterations / kRounds), cases[i].body));
    }
  }
  std::vector<Row> rows;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    rows.push_back({cases[i].name});
    if (anyFailed(rounds[i])) continue;
    const auto middle = [&](double Row::*field) {
      std::vector<double> values;
      for (const Row& r : rounds[i]) values.push_back(r.*field);
      std::sort(values.begin(), values.end());
      return values[values.size() / 2];
    };
    rows.back().wall_median = middle(&Row::wall_median);
    rows.back().cpu_mean = middle(&Row::cpu_mean);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 400;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::max(1, std::atoi(argv[i + 1]));
  }
  auto tree = SeccompFilter::build();
  auto linear = SeccompFilter::build(SeccompLayout::kLinear);
  if (!tree.ok() || !linear.ok()) {
    std::printf("seccomp not measured: %s\n", (tree.ok() ? linear : tree).error().message.c_str());
    return 1;
  }
  const auto instructions = [](const SeccompFilter& f) {
    return std::to_string(f.program().size() / sizeof(sock_filter));
  };
  const char* tree_kind = tree->layout() == SeccompLayout::kBinaryTree ? "tree" : "linear!";
  const std::string* linear_program = &linear->program();
  const std::string* tree_program = &tree->program();
  const std::vector<Row> seccomp = measureAlternated(
      {{"fork alone", [] { return forkAndInstall(nullptr); }},
       {"fork + install seccomp, linear (" + instructions(*linear) + ")",
        [linear_program] { return forkAndInstall(linear_program); }},
       {"fork + install seccomp, " + std::string(tree_kind) + " (" + instructions(*tree) + ")",
        [tree_program] { return forkAndInstall(tree_program); }}},
      iterations);
  print(seccomp, 0, "fork alone");
  const bool failed = anyFailed(seccomp);

  auto layout = relay::runtime::detectCgroupLayout("/proc/self/mounts", "/proc/self/cgroup",
                                                   "relay-isolation-bench");
  if (!layout.ok() || ::geteuid() != 0) {
    std::printf("cgroups not measured: %s\n",
                layout.ok() ? "not root" : layout.error().message.c_str());
    return failed ? 1 : 0;
  }
  relay::SystemClock clock;
  auto manager = relay::runtime::CgroupManager::create(*layout, clock);
  if (!manager.ok()) {
    std::printf("cgroups not measured: %s\n", manager.error().message.c_str());
    return 1;
  }
  std::vector<fs::path> bases = {layout->unified};
  if (layout->version == relay::runtime::CgroupVersion::kV1) {
    bases = {layout->memory, layout->pids, layout->cpu};
  }
  relay::runtime::Resources resources;  // the defaults an app gets
  int n = 0;
  const auto bare = [&] {
    const std::string name = "bare-" + std::to_string(n++);
    bool ok = true;
    for (const fs::path& base : bases) ok = ok && ::mkdir((base / name).c_str(), 0755) == 0;
    for (const fs::path& base : bases) ok = ::rmdir((base / name).c_str()) == 0 && ok;
    return ok;
  };
  const auto invocation = [&] {
    auto cgroup = (*manager)->createInvocation(resources);
    return cgroup.ok();  // destroyed here
  };
  const std::vector<Row> summary =
      measureAlternated({{"bare mkdir + rmdir per controller", bare},
                         {"invocation cgroup made + destroyed", invocation}},
                        iterations);
  std::printf("cgroup %s, %zu controller directories\n",
              layout->version == relay::runtime::CgroupVersion::kV1 ? "v1" : "v2", bases.size());
  print(summary, 0, "bare mkdir + rmdir per controller");
  manager->reset();
  for (const fs::path& base : bases) ::rmdir(base.c_str());
  return failed || anyFailed(summary) ? 1 : 0;
}
