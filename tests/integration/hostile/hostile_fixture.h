#pragma once

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fakes/temp_dir.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {

/// `relay start` on the sandbox runtime against a redis-server that demands a password, with
/// apps whose handlers are the escape attempts of hostile.py. Each test starts the worker
/// (after any host-side setup it needs), publishes one event per attempt and reads what the
/// handler reported from the worker's log.
class HostileHandler : public RedisTest {
 protected:
  static constexpr const char* kPassword = "hostile-test-requirepass";

  RedisServerOptions serverOptions() const override {
    RedisServerOptions options;
    options.extra_args = {"--requirepass", kPassword};
    return options;
  }

  void SetUp() override {
    RedisTest::SetUp();
    port_ = server().port();
    ::chmod(apps_.path().c_str(), 0755);
  }

  std::string redisUri() const {
    return "redis://:" + std::string(kPassword) + "@127.0.0.1:" + std::to_string(port_);
  }
  int port() const { return port_; }

  /// An app running hostile.py (python3 runtime) whose handler `hostile.<function>` runs for
  /// events `{"attempt": "<function>"}`; `extra_yaml` adds top-level template keys, `files`
  /// more files (path inside the app, content), `runtime` another language (the files must
  /// then hold the handler module).
  void addApp(const std::string& name, const std::vector<std::string>& functions,
              const std::string& extra_yaml = "",
              const std::vector<std::pair<std::string, std::string>>& files = {},
              const std::string& runtime = "python3") {
    std::string yaml = "runtime: " + runtime + "\n" + extra_yaml + "events:\n";
    for (const std::string& function : functions) {
      yaml += "  - handler: hostile." + function + "\n    pattern: {attempt: [" + function +
              "]}\n    retries: 0\n";
    }
    apps_.write(name + "/template.yaml", yaml);
    if (runtime == "python3") {
      std::filesystem::copy_file(RELAY_HOSTILE_PY, apps_.path() / name / "hostile.py");
    }
    for (const auto& [path, content] : files) apps_.write(name + "/" + path, content);
    // World-readable with searchable directories: every app has a sandbox user of its own.
    for (const auto& entry : std::filesystem::recursive_directory_iterator(apps_.path() / name)) {
      ::chmod(entry.path().c_str(), entry.is_directory() ? 0755 : 0644);
    }
    ::chmod((apps_.path() / name).c_str(), 0755);
  }

  /// A Redis connection to the test's server (with the password).
  std::unique_ptr<redis::Connection> connect() const {
    auto endpoint = redis::parseRedisUri(redisUri());
    auto connection = redis::Connection::create(*endpoint);
    EXPECT_TRUE(connection.ok()) << connection.error().message;
    return connection.ok() ? std::move(connection).value() : nullptr;
  }

  /// Starts `relay start` on the apps and waits until it runs; `wrapper` (argv) runs first and
  /// execs the relay command line given after it. With RELAY_HOSTILE_IMAGE set (tests/deploy
  /// registers the suite so a second time, `InContainer.*`), Relay runs in a container of that
  /// image under exactly the options of deploy/container/run-options, plus the host's network
  /// (Redis is on its loopback) and the apps mounted read-only; `wrapper` is then not used.
  void startRelay(std::vector<std::string> extra_env = {}, std::vector<std::string> wrapper = {}) {
    std::vector<std::string> env = {
        "REDIS_URI=" + redisUri(), "RELAY_APPS=" + apps_.path().string(),
        "RELAY_RUNTIME=sandbox",   "RELAY_HTTP_ADDR=127.0.0.1:0",
        "RELAY_CONSUMER=hostile",  "RELAY_LOG_FORMAT=text"};
    // The bwrap build unless ctest's Native. run of the suite asks for the native launcher
    // (docs/runtimes.md "Native launcher"): both builders meet every attempt.
    const char* launcher = std::getenv("RELAY_HOSTILE_SANDBOX_LAUNCHER");
    env.push_back(std::string("RELAY_SANDBOX_LAUNCHER=") +
                  (launcher != nullptr ? launcher : "bwrap"));
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    const std::string log_path = (logs_.path() / "relay.log").string();
    const char* image = std::getenv("RELAY_HOSTILE_IMAGE");
    if (image == nullptr || *image == '\0') {
      wrapper.insert(wrapper.end(), {RELAY_BINARY, "start"});
      relay_ = std::make_unique<SpawnedProcess>(wrapper, env, log_path);
    } else {
      container_ = std::make_unique<Container>("relay-hostile-" + std::to_string(::getpid()));
      std::vector<std::string> argv = {"/usr/bin/docker", "run",       "--rm", "--name",
                                       container_->name,  "--network", "host"};
      for (const std::string& option : containerRunOptions()) argv.push_back(option);
      argv.insert(argv.end(), {"-v", apps_.path().string() + ":" + apps_.path().string() + ":ro"});
      for (const std::string& variable : env) argv.insert(argv.end(), {"-e", variable});
      argv.insert(argv.end(), {image, "start"});
      relay_ = std::make_unique<SpawnedProcess>(argv, std::vector<std::string>{}, log_path);
    }
    // A container's start copies the image first (60 s covers the vfs storage driver).
    ASSERT_TRUE(relay_->waitForLog("relay started", std::chrono::seconds(90))) << relay_->log();
    // The builder asked for is the one that runs the attempts (never a silent fallback).
    const std::string chosen = launcher != nullptr ? launcher : "bwrap";
    EXPECT_NE(relay_->log().find("sandbox launcher: " + chosen), std::string::npos)
        << relay_->log();
  }

  /// deploy/container/run-options: one `docker run` option a line, `#` comments; the seccomp
  /// profile's path is relative to the file.
  static std::vector<std::string> containerRunOptions() {
    const std::filesystem::path file =
        std::filesystem::path(RELAY_SOURCE_DIR) / "deploy/container/run-options";
    std::ifstream in(file);
    std::vector<std::string> options;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      const std::string relative = "seccomp=";
      if (const auto at = line.find(relative); at != std::string::npos) {
        line = line.substr(0, at + relative.size()) +
               (file.parent_path() / line.substr(at + relative.size())).string();
      }
      options.push_back(line);
    }
    EXPECT_FALSE(options.empty()) << file;
    return options;
  }

  /// Publishes `event` (a JSON object with an `attempt` key) until one run of it was handed
  /// to a prewarmed sandbox (docs/runtimes.md "Prewarmed sandboxes"; the first run of an app
  /// usually starts cold, the warmer then prepares the next), at most kMaxRuns times, and
  /// returns the output lines of `<app>/hostile.<function>` (prefix removed) of every run so
  /// far: each escape is tried in a cold and in a prewarmed sandbox alike.
  std::vector<std::string> attempt(const std::string& app, const std::string& function,
                                   const std::string& event) {
    static constexpr int kMaxRuns = 6;
    auto endpoint = redis::parseRedisUri(redisUri());
    auto connection = redis::Connection::create(*endpoint);
    EXPECT_TRUE(connection.ok()) << connection.error().message;
    if (!connection.ok()) return {};
    const std::string prefix = "[" + app + "/hostile." + function + "] ";
    bool prewarmed = false;
    for (int run = 0; run < kMaxRuns && !prewarmed; ++run) {
      const std::size_t done_before = count(log(), prefix + "DONE ");
      EXPECT_TRUE((*connection)->command({"XADD", "events", "*", "event", event}).ok());
      const bool finished = SpawnedProcess::waitUntil(
          [&] { return count(log(), prefix + "DONE ") > done_before; }, std::chrono::seconds(60));
      EXPECT_TRUE(finished) << relay_->log();
      if (!finished) break;
      prewarmed = count(log(), prefix + "DONE prewarmed") > 0;
    }
    EXPECT_TRUE(prewarmed) << "no run of " << function << " was handed to a prewarmed sandbox";
    std::vector<std::string> lines;
    std::istringstream log(relay_->log());
    for (std::string line; std::getline(log, line);) {
      const auto at = line.find(prefix);
      if (at != std::string::npos) lines.push_back(line.substr(at + prefix.size()));
    }
    return lines;
  }

  static std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t found = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++found;
    }
    return found;
  }

  /// Asserts that the handler reported at least `min_results` attempts and none escaped.
  static void expectAllBlocked(const std::vector<std::string>& lines, std::size_t min_results) {
    std::size_t results = 0;
    for (const std::string& line : lines) {
      if (line.rfind("RESULT ", 0) != 0) continue;
      ++results;
      EXPECT_EQ(line.find(" ESCAPED "), std::string::npos) << line;
    }
    EXPECT_GE(results, min_results) << joined(lines);
  }

  /// Asserts that every run of the `fds` attempt listed exactly descriptors 0, 1 and 2.
  static void expectOnlyStandardDescriptors(const std::vector<std::string>& lines) {
    std::size_t runs = 0;
    for (const std::string& line : lines) {
      if (line.rfind("FDS ", 0) != 0) continue;
      ++runs;
      EXPECT_EQ(line, "FDS 0,1,2") << joined(lines);
    }
    EXPECT_GE(runs, 1u) << joined(lines);
  }

  static std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    return text;
  }

  std::string log() const { return relay_ ? relay_->log() : std::string(); }
  /// Whether `relay start` still runs.
  bool relayRunning() { return relay_ && relay_->running(); }
  pid_t relayPid() const { return relay_ ? relay_->pid() : -1; }

 private:
  /// A container `docker rm -f`'d at the end of the test (killing the `docker run` client
  /// would leave it running).
  struct Container {
    explicit Container(std::string container_name) : name(std::move(container_name)) { remove(); }
    ~Container() { remove(); }
    void remove() const {
      (void)!std::system(("/usr/bin/docker rm -f " + name + " >/dev/null 2>&1").c_str());
    }
    std::string name;
  };

  int port_ = 0;
  TempDir apps_;
  TempDir logs_;
  std::unique_ptr<Container> container_;  // before relay_: the client is killed first
  std::unique_ptr<SpawnedProcess> relay_;
};

}  // namespace relay::testing
