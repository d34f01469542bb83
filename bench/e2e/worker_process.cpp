#include "e2e/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e/spawn_baseline.h"

namespace relay::bench {

long procStatusKib(pid_t pid, const std::string& name) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(name + ":", 0) == 0) return std::atol(line.c_str() + name.size() + 1);
  }
  return -1;
}

std::unique_ptr<WorkerProcess> WorkerProcess::start(const Options& options) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var(*e);
    if (var.rfind("REDIS_", 0) != 0 && var.rfind("RELAY_", 0) != 0 && var.rfind("MAX_", 0) != 0) {
      env.push_back(var);
    }
  }
  env.push_back("REDIS_URI=" + options.redis_uri);
  env.push_back("REDIS_STREAM=" + options.stream);
  env.push_back("RELAY_CONSUMER=" + options.consumer);
  env.push_back("MAX_CONCURRENCY=" + std::to_string(options.max_concurrency));
  env.push_back("RELAY_HTTP_ADDR=127.0.0.1:0");
  env.push_back("RELAY_LOG_LEVEL=warn");
  if (!options.image_cache.empty())
    env.push_back("RELAY_IMAGE_CACHE=" + options.image_cache.string());
  if (!options.sandbox_launcher.empty())
    env.push_back("RELAY_SANDBOX_LAUNCHER=" + options.sandbox_launcher);
  const std::vector<std::string> args = {options.relay,         "start",     "--apps",
                                         options.apps.string(), "--runtime", options.runtime};
  std::vector<char*> argv, envp;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& var : env) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, options.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::unique_ptr<WorkerProcess> worker(new WorkerProcess());
  worker->log_ = options.log;
  const int rc = posix_spawn(&worker->pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return nullptr;
  return worker;
}

WorkerProcess::~WorkerProcess() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 300; ++i) {  // 30 s for in-flight handlers, then SIGKILL
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

bool WorkerProcess::running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

long WorkerProcess::rssKib() const { return procStatusKib(pid_, "VmRSS"); }
long WorkerProcess::peakRssKib() const { return procStatusKib(pid_, "VmHWM"); }

WorkerProcess::Cpu WorkerProcess::cpu() const {
  std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return {};
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> values;
  for (std::string field; fields >> field;) values.push_back(field);
  // After the name: state(3) ... utime(14) stime(15) cutime(16) cstime(17), 1-based.
  if (values.size() < 15) return {};
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const auto at = [&](int field) { return std::atof(values[field - 3].c_str()) / tick; };
  return {at(14) + at(15), at(16) + at(17)};
}

std::map<std::string, long long> WorkerProcess::takeStamps() {
  std::map<std::string, long long> stamps;
  std::ifstream log(log_, std::ios::binary);
  log.seekg(static_cast<std::streamoff>(log_offset_));
  std::string chunk((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  log_offset_ += chunk.size();
  partial_ += chunk;
  std::size_t start = 0;
  for (std::size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
    if (auto stamp = findStamp(std::string_view(partial_).substr(start, end - start))) {
      stamps[stamp->id] = stamp->ns;
    }
  }
  partial_.erase(0, start);
  return stamps;
}

std::string WorkerProcess::logTail(std::size_t bytes) const {
  std::ifstream log(log_, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

}  // namespace relay::bench
