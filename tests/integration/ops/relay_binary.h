#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fakes/temp_dir.h"

extern char** environ;

namespace relay::testing {

/// The outcome of one run of the real `relay` binary.
struct BinaryRun {
  int exit_code = -1;  // -1: killed after the time limit
  std::string out;
  std::string err;
};

/// Runs RELAY_BINARY with `args` and the process environment overridden by `env`, its stdout
/// and stderr captured separately, `stdin_text` on its stdin; killed after `limit`.
inline BinaryRun runRelay(const std::vector<std::string>& args, const std::vector<std::string>& env,
                          std::chrono::seconds limit = std::chrono::seconds(60),
                          const std::string& stdin_text = "") {
  TempDir dir;
  const std::string out_path = (dir.path() / "out").string();
  const std::string err_path = (dir.path() / "err").string();
  const std::string in_path = (dir.path() / "in").string();
  std::ofstream(in_path, std::ios::binary) << stdin_text;
  std::vector<std::string> argv = {RELAY_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  // getenv() takes the first of duplicate names, so `env` replaces inherited variables.
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    const std::string inherited(*e);
    const std::string name = inherited.substr(0, inherited.find('=') + 1);
    bool overridden = false;
    for (const std::string& value : env) overridden = overridden || value.rfind(name, 0) == 0;
    if (!overridden) environment.push_back(inherited);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> argv_c, env_c;
  for (auto& a : argv) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  for (auto& e : environment) env_c.push_back(e.data());
  env_c.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv_c[0], &actions, nullptr, argv_c.data(), env_c.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawn relay failed");
  BinaryRun run;
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      status = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (status != -1 && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  const auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  return run;
}

}  // namespace relay::testing
