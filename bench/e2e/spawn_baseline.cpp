#include "e2e/spawn_baseline.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>

namespace relay::bench {
namespace {

long long realtimeNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
}

// fork + exec of `command` with stdout on `out_fd` (the benchmark is single-threaded here, so a
// plain fork is what a bare loop does).
pid_t launch(const BareCommand& command, int out_fd) {
  std::vector<char*> argv, envp;
  for (const std::string& arg : command.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& var : command.env) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int null = ::open("/dev/null", O_RDWR);
  ::dup2(null, 0);
  ::dup2(out_fd >= 0 ? out_fd : null, 1);
  if (command.gid && (::setgroups(0, nullptr) != 0 ||
                      ::setresgid(*command.gid, *command.gid, *command.gid) != 0)) {
    ::_exit(126);
  }
  if (command.uid && ::setresuid(*command.uid, *command.uid, *command.uid) != 0) ::_exit(126);
  ::execve(argv[0], argv.data(), envp.data());
  ::_exit(127);
}

bool succeeded(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace

double bareSpawnRate(const BareCommand& command, int concurrency, int count) {
  const auto start = std::chrono::steady_clock::now();
  std::set<pid_t> running;
  int started = 0;
  while (started < count || !running.empty()) {
    while (started < count && static_cast<int>(running.size()) < concurrency) {
      const pid_t pid = launch(command, -1);
      if (pid < 0) return 0;
      running.insert(pid);
      ++started;
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, 0);
    if (done < 0) return 0;
    if (running.erase(done) == 1 && !succeeded(status)) return 0;
  }
  return count / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> bareStartLatencies(const BareCommand& command, int count) {
  std::vector<double> samples;
  for (int i = 0; i < count; ++i) {
    int pipe[2];
    if (::pipe2(pipe, O_CLOEXEC) != 0) return {};
    const long long before = realtimeNs();
    const pid_t pid = launch(command, pipe[1]);
    ::close(pipe[1]);
    std::string output;
    char buffer[512];
    for (ssize_t n; (n = ::read(pipe[0], buffer, sizeof buffer)) > 0;) output.append(buffer, n);
    ::close(pipe[0]);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !succeeded(status)) return {};
    const std::size_t at = output.find("relay-stamp ");
    if (at == std::string::npos) return {};
    const std::size_t space = output.find(' ', at + 12);
    const long long stamp = std::atoll(output.c_str() + space + 1);
    samples.push_back(static_cast<double>(stamp - before) / 1e6);
  }
  return samples;
}

}  // namespace relay::bench
