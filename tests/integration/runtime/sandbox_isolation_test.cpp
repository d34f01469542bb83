// What a hostile handler can and cannot do inside the bubblewrap sandbox (relay.md section 4).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "integration/runtime/runtime_harness.h"
#include "runtime/sandbox/sandbox_runtime.h"

namespace relay::runtime::testing {
namespace {

std::string readFile(const std::filesystem::path& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class SandboxIsolation : public ::testing::Test {
 protected:
  Outcome runScript(const std::string& body, InvocationSpec* customise = nullptr) {
    app_.script("bin/h.sh", body);
    InvocationSpec spec = customise ? *customise : app_.spec(Language::kExec, "bin/h.sh");
    spec.app_dir = app_.path();
    spec.handler = "bin/h.sh";
    auto outcome = runtime_->run(spec, sink_);
    EXPECT_TRUE(outcome.ok()) << outcome.error().message;
    return outcome.ok() ? *outcome : Outcome{};
  }
  std::string output() const { return sink_.text("[testapp/bin/h.sh] "); }

  SystemClock clock_;
  std::unique_ptr<SandboxRuntime> runtime_ = SandboxRuntime::create(clock_);
  TestApp app_;
  CollectingSink sink_;
};

TEST_F(SandboxIsolation, RunsAsAnUnprivilegedUserWithNoCapabilities) {
  const Outcome outcome =
      runScript("id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status");
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << output();
  EXPECT_NE(output().find("65534\n"), std::string::npos) << output();
  EXPECT_NE(output().find("CapEff:\t0000000000000000"), std::string::npos) << output();
  EXPECT_NE(output().find("CapBnd:\t0000000000000000"), std::string::npos) << output();
  EXPECT_NE(output().find("NoNewPrivs:\t1"), std::string::npos) << output();
}

TEST_F(SandboxIsolation, CannotSeeRootHomeOrRelaysFiles) {
  const Outcome outcome = runScript(
      "for p in /root /home /work /proc/1/root/root; do test -e $p && echo visible $p; done; "
      "ls /");
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  EXPECT_EQ(output().find("visible"), std::string::npos) << output();
}

TEST_F(SandboxIsolation, AppIsReadOnlyAndTmpIsPrivateAndWritable) {
  const Outcome outcome = runScript(
      "touch /app/new 2>/dev/null && echo app-writable; "
      "touch /usr/new 2>/dev/null && echo usr-writable; "
      "echo hi > /tmp/x && cat /tmp/x; cat /app/bin/h.sh >/dev/null && echo app-readable");
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  EXPECT_EQ(output(), "hi\napp-readable") << output();
}

TEST_F(SandboxIsolation, SeesOnlyItsOwnProcesses) {
  const Outcome outcome = runScript("ls /proc | grep -cE '^[0-9]+$'");
  EXPECT_TRUE(outcome.succeeded);
  EXPECT_LE(std::stoi(output()), 5) << output();  // bwrap's init, sh, ls, grep
}

class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::listen(fd_, 4);
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~Listener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_F(SandboxIsolation, HasNoNetworkByDefault) {
  Listener listener;
  app_.file("net.py",
            "import socket\n"
            "def fn(event):\n"
            "    socket.create_connection(('127.0.0.1', " +
                std::to_string(listener.port()) + "), timeout=2).close()\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "net.fn");
  auto outcome = runtime_->run(spec, sink_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_TRUE(sink_.contains("ConnectionRefused") || sink_.contains("unreachable"));
}

TEST_F(SandboxIsolation, NetworkTrueReachesTheHost) {
  Listener listener;
  app_.file("net.py",
            "import socket\n"
            "def fn(event):\n"
            "    socket.create_connection(('127.0.0.1', " +
                std::to_string(listener.port()) + "), timeout=2).close()\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "net.fn");
  spec.network = true;
  auto outcome = runtime_->run(spec, sink_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->succeeded) << outcome->reason;
}

TEST_F(SandboxIsolation, ForkBombIsContainedByThePidsLimit) {
  InvocationSpec spec = app_.spec(Language::kExec, "bin/h.sh");
  spec.resources.pids = 16;
  spec.timeout = std::chrono::seconds(2);
  const Outcome outcome = runScript("bomb() { bomb | bomb & }; bomb; sleep 5", &spec);
  EXPECT_FALSE(outcome.succeeded);
  // The test process (the "worker") is alive and can still fork.
  EXPECT_EQ(::system("true"), 0);
}

TEST_F(SandboxIsolation, MemoryHogIsKilledAtTheLimit) {
  app_.file("hog.py",
            "def fn(event):\n    data = bytearray(512 * 1024 * 1024)\n    data[-1] = 1\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "hog.fn");
  spec.resources.memory_bytes = 64ULL << 20;
  auto outcome = runtime_->run(spec, sink_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_NE(outcome->reason.find("out of memory"), std::string::npos) << outcome->reason;
}

TEST_F(SandboxIsolation, TimeoutLeavesNoProcessAndNoCgroupBehind) {
  InvocationSpec spec = app_.spec(Language::kExec, "bin/h.sh");
  spec.timeout = std::chrono::milliseconds(300);
  const Outcome outcome = runScript("setsid sleep 100 & sleep 100", &spec);
  EXPECT_EQ(outcome.reason, "timeout 300ms");
  // What remains of ours is at most a cgroup prepared for the next invocation: empty, and its
  // memory peak says no process was ever charged to it.
  const CgroupLayout& layout = runtime_->cgroups()->layout();
  const bool v2 = layout.version == CgroupVersion::kV2;
  const auto base = v2 ? layout.unified : layout.memory;
  int remaining = 0;
  for (const auto& entry : std::filesystem::directory_iterator(base)) {
    if (!entry.is_directory() ||
        entry.path().filename().string().rfind("inv-" + std::to_string(::getpid()) + "-", 0) != 0) {
      continue;
    }
    ++remaining;
    EXPECT_EQ(readFile(entry.path() / "cgroup.procs"), "") << "left behind: " << entry.path();
    EXPECT_EQ(readFile(entry.path() / (v2 ? "memory.peak" : "memory.max_usage_in_bytes")), "0\n")
        << "used before: " << entry.path();
  }
  EXPECT_LE(remaining, 1);
}

TEST_F(SandboxIsolation, StaleCgroupsOfACrashedRelayAreReapedAtStart) {
  const CgroupLayout& layout = runtime_->cgroups()->layout();
  ASSERT_EQ(layout.version, CgroupVersion::kV1) << "this machine has a v1 layout";
  const auto stale = layout.pids / "inv-0-stale";
  std::filesystem::create_directories(stale);
  const pid_t sleeper = ::fork();
  if (sleeper == 0) {
    ::execl("/bin/sleep", "sleep", "300", nullptr);
    ::_exit(127);
  }
  std::ofstream(stale / "cgroup.procs") << sleeper;
  auto fresh = SandboxRuntime::create(clock_);
  EXPECT_EQ(fresh->cgroups()->reapedAtStart(), 1);
  EXPECT_FALSE(std::filesystem::exists(stale));
  int status = 0;
  ASSERT_EQ(::waitpid(sleeper, &status, 0), sleeper);
  EXPECT_TRUE(WIFSIGNALED(status));
}

TEST(SandboxRuntime, MissingBwrapMakesEveryAppUnavailable) {
  SystemClock clock;
  SandboxSettings settings;
  settings.search_path = "/nonexistent";
  auto runtime = SandboxRuntime::create(clock, settings);
  TestApp app;
  app.script("bin/h.sh", "true");
  const Availability availability = runtime->availability(app.spec(Language::kExec, "bin/h.sh"));
  EXPECT_FALSE(availability.available);
  EXPECT_NE(availability.reason.find("bwrap"), std::string::npos);
  CollectingSink sink;
  const auto outcome = runtime->run(app.spec(Language::kExec, "bin/h.sh"), sink);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
}

TEST(SandboxRuntime, ASandboxBwrapCannotStartMakesEveryAppUnavailableWithItsMessage) {
  SystemClock clock;
  SandboxSettings settings;
  settings.tmp_bytes = 0;  // bwrap refuses `--size 0`: stands for any option it cannot apply
  auto runtime = SandboxRuntime::create(clock, settings);
  EXPECT_NE(runtime->hostProblem().find("bwrap cannot start a sandbox"), std::string::npos)
      << runtime->hostProblem();
  EXPECT_NE(runtime->hostProblem().find("--size"), std::string::npos) << runtime->hostProblem();
  TestApp app;
  app.script("bin/h.sh", "true");
  CollectingSink sink;
  const auto outcome = runtime->run(app.spec(Language::kExec, "bin/h.sh"), sink);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
}

TEST(SandboxRuntime, BuildsTheSeccompFilterAndFindsWhatBwrapSupports) {
  SystemClock clock;
  auto runtime = SandboxRuntime::create(clock);
  ASSERT_EQ(runtime->hostProblem(), "");
  // Debian 12's bwrap 0.8.0 has --disable-userns (docs/runtimes.md).
  EXPECT_TRUE(runtime->tools().bwrap_disable_userns);
}

TEST(SandboxRuntime, AppDirectoryUnreadableByTheSandboxUserIsUnavailable) {
  SystemClock clock;
  auto runtime = SandboxRuntime::create(clock);
  relay::testing::TempDir private_dir;  // 0700, owned by root
  private_dir.write("bin/h.sh", "#!/bin/sh\n", 0755);
  InvocationSpec spec;
  spec.app = "private";
  spec.app_dir = private_dir.path();
  spec.handler = "bin/h.sh";
  const Availability availability = runtime->availability(spec);
  EXPECT_FALSE(availability.available);
  EXPECT_NE(availability.reason.find("not readable by the sandbox user"), std::string::npos)
      << availability.reason;
}

}  // namespace
}  // namespace relay::runtime::testing
