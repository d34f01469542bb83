#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace relay::testing {

/// A child process started with extra environment variables, its stdout and stderr going to a
/// log file. Killed (SIGKILL) and reaped on destruction. For end-to-end tests of binaries.
class SpawnedProcess {
 public:
  SpawnedProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                 std::string log_path)
      : log_path_(std::move(log_path)) {
    // The extra variables replace inherited ones of the same name (getenv takes the first).
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string inherited(*e);
      const std::string name = inherited.substr(0, inherited.find('='));
      bool overridden = false;
      for (const std::string& extra : extra_env) {
        overridden = overridden || extra.rfind(name + "=", 0) == 0;
      }
      if (!overridden) env.push_back(inherited);
    }
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0] + " failed");
  }
  ~SpawnedProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  SpawnedProcess(const SpawnedProcess&) = delete;
  SpawnedProcess& operator=(const SpawnedProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const { ::kill(pid_, sig); }

  /// Whether the process still runs (reaps it, once, when it has exited).
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
    pid_ = -1;
    return false;
  }

  /// Waits (bounded) for the exit; returns the wait status, or -1 on timeout.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

  std::string log() const {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  /// Waits (bounded) until the log contains `needle`.
  bool waitForLog(const std::string& needle,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) const {
    return waitUntil([&] { return log().find(needle) != std::string::npos; }, timeout);
  }

  static bool waitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return condition();
  }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

}  // namespace relay::testing
