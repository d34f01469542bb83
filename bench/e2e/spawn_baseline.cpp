#include "e2e/spawn_baseline.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"

namespace relay::bench {

long long realtimeNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
}

std::optional<Stamp> findStamp(std::string_view text) {
  const std::size_t at = text.find("relay-stamp ");
  if (at == std::string_view::npos) return std::nullopt;
  std::istringstream fields{std::string(text.substr(at + 12))};
  Stamp stamp;
  if (!(fields >> stamp.id >> stamp.ns)) return std::nullopt;
  return stamp;
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

// The stamp's time in a start's output minus `since_ns`, in ms; false without a stamp.
bool stampSample(const std::string& output, long long since_ns, double& sample) {
  const std::optional<Stamp> stamp = findStamp(output);
  if (!stamp) return false;
  sample = static_cast<double>(stamp->ns - since_ns) / 1e6;
  return true;
}

// Runs `measure` in a child process that dropped privileges like the spawners; it writes its
// samples to the descriptor it is given. The samples, or nothing when the child failed.
std::vector<double> samplesFromHelper(const BareCommand& command,
                                      const std::function<bool(int)>& measure) {
  int results[2];
  if (::pipe2(results, O_CLOEXEC) != 0) return {};
  const pid_t helper = ::fork();
  if (helper == 0) {
    ::close(results[0]);
    ::_exit(dropPrivileges(command) && measure(results[1]) ? 0 : 1);
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

// Runs `command` to its end; its stdout, or nullopt when it failed.
std::optional<std::string> outputOf(const BareCommand& command) {
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = launch(command, pipe[1]);
  ::close(pipe[1]);
  std::string output;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe[0], buffer, sizeof buffer)) > 0;) output.append(buffer, n);
  ::close(pipe[0]);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !succeeded(status)) return std::nullopt;
  return output;
}

}  // namespace

double bareSpawnRate(const BareCommand& command, int concurrency, int count,
                     const SpawnerStep& step) {
  // As many single-threaded spawner processes as the worker has handler slots, each starting
  // and reaping its share one at a time (the scheduler shares a loaded machine per thread, so one
  // loop would be starved next to the worker's pool). Each makes its step first (a connection,
  // say) and says so on `ready`; the clock starts once all are ready, and they start together
  // when `go` closes.
  int ready[2], go[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return 0;
  if (::pipe2(go, O_CLOEXEC) != 0) {
    ::close(ready[0]);
    ::close(ready[1]);
    return 0;
  }
  std::vector<pid_t> spawners;
  bool ok = true;
  for (int s = 0; s < concurrency; ++s) {
    const int share = count / concurrency + (s < count % concurrency ? 1 : 0);
    const pid_t spawner = ::fork();
    if (spawner < 0) {
      ok = false;
      break;
    }
    if (spawner == 0) {
      ::close(ready[0]);
      ::close(go[1]);
      if (!dropPrivileges(command)) ::_exit(1);
      const std::function<bool()> around = step ? step() : [] { return true; };
      char byte = 'r';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
      ::close(ready[1]);
      while (::read(go[0], &byte, 1) < 0 && errno == EINTR) {
      }
      for (int i = 0; i < share; ++i) {
        if (!around()) ::_exit(1);
        const pid_t pid = launch(command, -1);
        if (pid < 0 || !around()) ::_exit(1);
        int status = 0;
        if (::waitpid(pid, &status, 0) != pid || !succeeded(status) || !around()) ::_exit(1);
      }
      ::_exit(0);
    }
    spawners.push_back(spawner);
  }
  ::close(ready[1]);
  ::close(go[0]);
  // Until every spawner said it is ready, or all that will have (one that failed exits).
  char bytes[64];
  for (ssize_t n; (n = ::read(ready[0], bytes, sizeof bytes)) != 0;) {
    if (n < 0 && errno != EINTR) break;
  }
  ::close(ready[0]);
  const auto start = std::chrono::steady_clock::now();
  ::close(go[1]);
  for (const pid_t spawner : spawners) {
    int status = 0;
    ok = ::waitpid(spawner, &status, 0) == spawner && succeeded(status) && ok;
  }
  if (!ok) return 0;
  return count / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> bareStartLatencies(const BareCommand& command, int count,
                                       std::chrono::microseconds pace) {
  return samplesFromHelper(command, [&](int results) {
    auto next = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) {
      std::this_thread::sleep_until(next);
      next += pace;
      const long long before = realtimeNs();
      const std::optional<std::string> output = outputOf(command);
      double sample = 0;
      if (!output || !stampSample(*output, before, sample) ||
          ::write(results, &sample, sizeof sample) != sizeof sample) {
        return false;
      }
    }
    return true;
  });
}

std::vector<double> bareArrivalLatencies(const BareCommand& command, int count,
                                         std::chrono::microseconds pace, int concurrency) {
  return samplesFromHelper(command, [&](int results) {
    struct Running {
      pid_t pid;
      UniqueFd output;
      std::string text;
      long long due_ns;
    };
    std::vector<Running> running;
    const long long first_ns = realtimeNs();
    const auto first = std::chrono::steady_clock::now();
    int started = 0;
    while (started < count || !running.empty()) {
      const auto due = first + pace * started;
      if (started < count && static_cast<int>(running.size()) < concurrency &&
          std::chrono::steady_clock::now() >= due) {
        int pipe[2];
        if (::pipe2(pipe, O_CLOEXEC) != 0) return false;
        const pid_t pid = launch(command, pipe[1]);
        ::close(pipe[1]);
        if (pid < 0) return false;
        running.push_back(
            {pid,
             UniqueFd(pipe[0]),
             {},
             first_ns +
                 std::chrono::duration_cast<std::chrono::nanoseconds>(pace * started).count()});
        ++started;
        continue;
      }
      // Wait for output, an end, or (with a free slot) the next due time.
      std::vector<pollfd> fds;
      for (const Running& r : running) fds.push_back({r.output.get(), POLLIN, 0});
      int timeout_ms = -1;
      if (started < count && static_cast<int>(running.size()) < concurrency) {
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
            due - std::chrono::steady_clock::now());
        timeout_ms = static_cast<int>(std::max<long long>(0, wait.count() + 1));
      }
      if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) return false;
      for (std::size_t i = fds.size(); i-- > 0;) {
        if (fds[i].revents == 0) continue;
        char buffer[512];
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n > 0) {
          running[i].text.append(buffer, static_cast<std::size_t>(n));
          continue;
        }
        int status = 0;
        double sample = 0;
        if (::waitpid(running[i].pid, &status, 0) != running[i].pid || !succeeded(status) ||
            !stampSample(running[i].text, running[i].due_ns, sample) ||
            ::write(results, &sample, sizeof sample) != sizeof sample) {
          return false;
        }
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    return true;
  });
}

std::vector<double> createdStartLatencies(const BareCommand& create, int count,
                                          std::chrono::microseconds pace) {
  std::vector<std::string> ids;
  std::vector<double> samples;
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    const std::optional<std::string> id = outputOf(create);
    ok = id && !id->empty();
    if (ok) ids.push_back(id->substr(0, id->find_first_of("\r\n")));
  }
  auto next = std::chrono::steady_clock::now();
  for (const std::string& id : ids) {
    if (!ok) break;
    std::this_thread::sleep_until(next);
    next += pace;
    const BareCommand start{{create.argv[0], "start", "-a", id}, create.env, {}, {}, {}};
    const long long before = realtimeNs();
    const std::optional<std::string> output = outputOf(start);
    double sample = 0;
    ok = output && stampSample(*output, before, sample);
    if (ok) samples.push_back(sample);
  }
  if (!ids.empty()) {
    BareCommand remove{{create.argv[0], "rm", "-f"}, create.env, {}, {}, {}};
    remove.argv.insert(remove.argv.end(), ids.begin(), ids.end());
    (void)outputOf(remove);
  }
  return ok ? samples : std::vector<double>{};
}

}  // namespace relay::bench
