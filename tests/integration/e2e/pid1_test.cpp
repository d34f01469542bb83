// The real `relay start` as PID 1 of a pid namespace, as in a container without an init: the
// processes the namespace orphans to it are reaped (docs/operations.md "Relay as PID 1").
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/temp_dir.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

std::string readText(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string pidNamespace(pid_t pid) {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/pid", ec).string();
}

// Zombies (state Z) whose parent lives in the pid namespace `ns` (a zombie's own namespace
// link cannot be read), as "pid (command)" lines.
std::string zombiesIn(const std::string& ns) {
  std::string found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = readText(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    if (state == "Z" && pidNamespace(parent) == ns) found += stat.substr(0, close + 1) + "\n";
  }
  return found;
}

TEST(RelayAsPid1, ReapsWhatTheNamespaceOrphansToIt) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  TempDir apps;
  ::chmod(apps.path().c_str(), 0755);
  // The handler daemonises a grandchild and ignores SIGTERM past its timeout: the whole sandbox
  // is then killed at once (SIGKILL). bwrap's namespace init, orphaned whenever bwrap exits
  // first (after every invocation, the start-up probes included), lands on PID 1.
  apps.write("daemon/template.yaml",
             "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
             "    timeout: 1s\n    retries: 0\n");
  apps.write("daemon/bin/h.sh",
             "#!/bin/sh\ntrap '' TERM\nsetsid sh -c 'sleep 100' </dev/null >/dev/null 2>&1 &\n"
             "echo daemonised\nsleep 100\n",
             0755);
  ::chmod((apps.path() / "daemon").c_str(), 0755);
  ::chmod((apps.path() / "daemon/bin").c_str(), 0755);
  SpawnedProcess relay(
      {"/usr/bin/unshare", "--pid", "--fork", "--mount-proc", RELAY_BINARY, "start"},
      {"REDIS_URI=" + (*server)->uri(), "RELAY_APPS=" + apps.path().string(),
       "RELAY_HTTP_ADDR=127.0.0.1:0", "RELAY_CONSUMER=pid1"},
      (apps.path() / "relay.log").string());
  ASSERT_TRUE(relay.waitForLog("relay started")) << relay.log();
  // unshare's only child is PID 1 of the new namespace.
  const std::string children = readText("/proc/" + std::to_string(relay.pid()) + "/task/" +
                                        std::to_string(relay.pid()) + "/children");
  ASSERT_FALSE(children.empty());
  const pid_t pid1 = static_cast<pid_t>(std::stoi(children));
  const std::string ns = pidNamespace(pid1);
  ASSERT_NE(ns, pidNamespace(::getpid()));
  auto redis = (*server)->connect();
  ASSERT_TRUE(redis->command({"XADD", "events", "*", "event", R"({"kind":"job"})"}).ok());
  ASSERT_TRUE(relay.waitForLog("[daemon/bin/h.sh] daemonised")) << relay.log();
  ASSERT_TRUE(relay.waitForLog("timeout 1s", seconds(30))) << relay.log();
  std::string zombies;
  // Reaping is immediate; the wait only covers the kernel's delivery of SIGCHLD.
  const bool none = SpawnedProcess::waitUntil(
      [&] {
        zombies = zombiesIn(ns);
        return zombies.empty();
      },
      seconds(5));
  EXPECT_TRUE(none) << "zombies in Relay's pid namespace:\n" << zombies;
  // SIGTERM reaches the worker through PID 1, which exits with the worker's status.
  ::kill(pid1, SIGTERM);
  const int status = relay.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << relay.log();
  EXPECT_NE(relay.log().find("relay stopped"), std::string::npos) << relay.log();
}

}  // namespace
}  // namespace relay::testing
