#include "e2e/spawn_baseline.h"

#include <fcntl.h>
#include <grp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace relay::bench {

long long realtimeNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
}

namespace {

// Drops to the command's uid/gid (as Relay does before it execs bwrap); false on failure.
bool dropPrivileges(const BareCommand& command) {
  if (command.gid && (::setgroups(0, nullptr) != 0 ||
                      ::setresgid(*command.gid, *command.gid, *command.gid) != 0)) {
    return false;
  }
  return !command.uid || ::setresuid(*command.uid, *command.uid, *command.uid) == 0;
}

// posix_spawn (vfork-like, the fastest plain start) of `command` with stdin on /dev/null and
// stdout on `out_fd` (or /dev/null), and its seccomp program at descriptor 3 when it has one;
// the caller has dropped privileges already.
pid_t launch(const BareCommand& command, int out_fd) {
  std::vector<char*> argv, envp;
  for (const std::string& arg : command.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& var : command.env) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  Result<UniqueFd> program = UniqueFd();
  if (command.seccomp) program = command.seccomp->openProgram();
  pid_t pid = -1;
  int rc = -1;
  if (program.ok()) {
    if (program->valid()) posix_spawn_file_actions_adddup2(&actions, program->get(), 3);
    rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  }
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

bool succeeded(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace

double bareSpawnRate(const BareCommand& command, int concurrency, int count) {
  // As many single-threaded spawner processes as the worker has handler slots, each starting
  // and reaping its share one at a time (the scheduler shares a loaded machine per thread, so one
  // loop would be starved next to the worker's pool).
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> spawners;
  for (int s = 0; s < concurrency; ++s) {
    const int share = count / concurrency + (s < count % concurrency ? 1 : 0);
    const pid_t spawner = ::fork();
    if (spawner == 0) {
      if (!dropPrivileges(command)) ::_exit(1);
      for (int i = 0; i < share; ++i) {
        const pid_t pid = launch(command, -1);
        int status = 0;
        if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !succeeded(status)) ::_exit(1);
      }
      ::_exit(0);
    }
    spawners.push_back(spawner);
  }
  bool ok = true;
  for (const pid_t spawner : spawners) {
    int status = 0;
    ok = ::waitpid(spawner, &status, 0) == spawner && succeeded(status) && ok;
  }
  if (!ok) return 0;
  return count / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> bareStartLatencies(const BareCommand& command, int count,
                                       std::chrono::microseconds pace) {
  // Measured in a helper process that drops privileges like the spawners above and sends the
  // samples back over a pipe.
  int results[2];
  if (::pipe2(results, O_CLOEXEC) != 0) return {};
  const pid_t helper = ::fork();
  if (helper == 0) {
    ::close(results[0]);
    if (!dropPrivileges(command)) ::_exit(1);
    auto next = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) {
      std::this_thread::sleep_until(next);
      next += pace;
      int pipe[2];
      if (::pipe2(pipe, O_CLOEXEC) != 0) ::_exit(1);
      const long long before = realtimeNs();
      const pid_t pid = launch(command, pipe[1]);
      ::close(pipe[1]);
      std::string output;
      char buffer[512];
      for (ssize_t n; (n = ::read(pipe[0], buffer, sizeof buffer)) > 0;) output.append(buffer, n);
      ::close(pipe[0]);
      int status = 0;
      if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !succeeded(status)) ::_exit(1);
      const std::size_t at = output.find("relay-stamp ");
      if (at == std::string::npos) ::_exit(1);
      const std::size_t space = output.find(' ', at + 12);
      const double sample =
          static_cast<double>(std::atoll(output.c_str() + space + 1) - before) / 1e6;
      if (::write(results[1], &sample, sizeof sample) != sizeof sample) ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(results[1]);
  std::vector<double> samples;
  double sample = 0;
  while (::read(results[0], &sample, sizeof sample) == sizeof sample) samples.push_back(sample);
  ::close(results[0]);
  int status = 0;
  if (helper < 0 || ::waitpid(helper, &status, 0) != helper || !succeeded(status)) return {};
  return samples;
}

}  // namespace relay::bench
