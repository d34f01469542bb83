// What a hostile handler can and cannot do inside the bubblewrap sandbox (docs/runtimes.md
// "sandbox"). Built twice: cold starts (integration_sandbox_runtime_tests) and every invocation
// handed to a prewarmed sandbox (integration_prewarmed_sandbox_runtime_tests, sandbox_harness.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "integration/runtime/runtime_harness.h"
#include "integration/runtime/sandbox_harness.h"
#include "runtime/sandbox/sandbox_runtime.h"
#include "support/egress_namespace.h"
#include "support/spawned_process.h"

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
    auto outcome = runOnce(*runtime_, spec, sink_);
    EXPECT_TRUE(outcome.ok()) << outcome.error().message;
    return outcome.ok() ? *outcome : Outcome{};
  }
  std::string output() const { return sink_.text("[testapp/bin/h.sh] "); }

  SystemClock clock_;
  std::unique_ptr<SandboxRuntime> runtime_ = makeSandboxTestRuntime(clock_);
  TestApp app_;
  CollectingSink sink_;
};

TEST_F(SandboxIsolation, RunsAsAnUnprivilegedUserWithNoCapabilities) {
  const Outcome outcome =
      runScript("id -u; id -g; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status");
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << output();
  // The app's own uid and gid (docs/runtimes.md "Identities"), the same inside and outside.
  const std::string id = std::to_string(runtime_->identityOf("testapp"));
  EXPECT_NE(output().find(id + "\n" + id + "\n"), std::string::npos) << output();
  EXPECT_GT(runtime_->identityOf("testapp"), SandboxIdRange{}.first);
  EXPECT_NE(output().find("CapEff:\t0000000000000000"), std::string::npos) << output();
  EXPECT_NE(output().find("CapBnd:\t0000000000000000"), std::string::npos) << output();
  EXPECT_NE(output().find("NoNewPrivs:\t1"), std::string::npos) << output();
}

// Not only the handler: every process it can see, the sandbox's init (bwrap's, or the native
// launcher's) included, runs as the app's uid with nothing to gain from (docs/runtimes.md
// "Native launcher").
TEST_F(SandboxIsolation, EveryProcessInTheSandboxIsUnprivileged) {
  const Outcome outcome = runScript(
      "for s in /proc/[0-9]*/status; do "
      "  grep -qE '^Uid:\\s+0\\s' $s && echo root-process $s; "
      "  grep -q '^CapEff:\\s0000000000000000' $s || echo capable $s; "
      "  grep -q '^CapBnd:\\s0000000000000000' $s || echo bounding $s; "
      "  grep -q '^NoNewPrivs:\\s1' $s || echo no-nnp $s; "
      "done; grep '^Uid' /proc/1/status");
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << output();
  const std::string id = std::to_string(runtime_->identityOf("testapp"));
  EXPECT_EQ(output(), "Uid:\t" + id + "\t" + id + "\t" + id + "\t" + id) << output();
}

TEST_F(SandboxIsolation, WithNetworkStillUnprivilegedWithNoNewPrivsAndSeccomp) {
  InvocationSpec spec = app_.spec(Language::kExec, "bin/h.sh");
  spec.network = true;
  const Outcome outcome =
      runScript("id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status", &spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << output();
  EXPECT_NE(output().find(std::to_string(runtime_->identityOf("testapp")) + "\n"),
            std::string::npos)
      << output();
  EXPECT_NE(output().find("CapEff:\t0000000000000000"), std::string::npos) << output();
  EXPECT_NE(output().find("CapBnd:\t0000000000000000"), std::string::npos) << output();
  EXPECT_NE(output().find("NoNewPrivs:\t1"), std::string::npos) << output();
  EXPECT_NE(output().find("Seccomp:\t2"), std::string::npos) << output();
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

TEST_F(SandboxIsolation, OnlyTmpIsWritableAndItIsCapped) {
  const Outcome outcome = runScript(
      "for d in / /app /etc /var /usr /dev /dev/shm /proc/sys /tmp; do "
      "  if (echo x > $d/relay-probe) 2>/dev/null; then echo writable $d; fi; done; "
      "mkdir /new 2>/dev/null && echo mkdir-root; "
      "dd if=/dev/zero of=/tmp/fill bs=1M count=80 2>/dev/null; "
      "mib=$(( $(stat -c %s /tmp/fill) / 1048576 )); "
      "[ $mib -ge 60 ] && [ $mib -le 64 ] && echo capped || echo filled $mib MiB");
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << output();
  // The 64 MiB tmpfs (SandboxSettings::tmp_bytes) stops the 80 MiB write.
  EXPECT_EQ(output(), "writable /tmp\ncapped") << output();
}

// The native launcher's app and system trees are private copies: a mount the host makes under
// the app directory while a sandbox runs never appears inside (nor would one of the sandbox's
// appear outside). bwrap makes its tree a slave of the host's instead: the host's later mounts do
// appear, nothing goes out. Either way the sandbox's init cannot be used to reach any other tree
// (the native launcher's prepared one included): its root is the sandbox's, its mount namespace the
// handler's, and no descriptor of a namespace is open in it or in the handler.
TEST_F(SandboxIsolation, NativeCopiesArePrivateAndTheInitOpensNoOtherTree) {
  std::filesystem::create_directories(app_.path() / "sub");
  // The app directory a shared mount of its own, as on a host whose / is shared (systemd's
  // default): a copy that is not made private would receive the host's later mounts.
  const std::string app = app_.path().string();
  ASSERT_EQ(::mount(app.c_str(), app.c_str(), nullptr, MS_BIND, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, app.c_str(), nullptr, MS_SHARED, nullptr), 0);
  std::thread host([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    const std::string sub = (app_.path() / "sub").string();
    ASSERT_EQ(::mount("tmpfs", sub.c_str(), "tmpfs", 0, "size=1m"), 0) << std::strerror(errno);
    std::ofstream(app_.path() / "sub" / "marker") << "host";
  });
  const Outcome outcome = runScript(
      // Where the init's tree can be read (bwrap's init runs as the app's uid, dumpable), it is
      // the sandbox's own; where its namespace can be named, it is the handler's.
      "ls -a /proc/1/root/ >/tmp/init-root 2>/dev/null && ls -a / >/tmp/own-root && "
      "  ! cmp -s /tmp/init-root /tmp/own-root && echo other-root; "
      "a=$(readlink /proc/1/ns/mnt 2>/dev/null); "
      "[ -n \"$a\" ] && [ \"$a\" != \"$(readlink /proc/self/ns/mnt)\" ] && echo other-ns; "
      "ls -l /proc/1/fd/ /proc/self/fd/ 2>/dev/null | grep -E 'mnt:|net:|user:' && echo holds-ns; "
      "i=0; while [ $i -lt 20 ]; do "
      "  [ -e /app/sub/marker ] && echo propagated && break; sleep 0.1; i=$((i+1)); done; "
      "echo done");
  host.join();
  ::umount2((app_.path() / "sub").c_str(), MNT_DETACH);
  ::umount2(app.c_str(), MNT_DETACH);
  EXPECT_TRUE(std::filesystem::exists(app_.path() / "sub")) << "the host mount was not made";
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << output();
  if (kNativeBuild) {
    EXPECT_EQ(output(), "done") << output();
  } else {
    EXPECT_TRUE(output() == "done" || output() == "propagated\ndone") << output();
  }
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
  auto outcome = runOnce(*runtime_, spec, sink_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_TRUE(sink_.contains("ConnectionRefused") || sink_.contains("unreachable"));
}

// A listening abstract unix socket in the host's network namespace.
class AbstractListener {
 public:
  explicit AbstractListener(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path + 1, name.data(), name.size());
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address),
           static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size()));
    ::listen(fd_, 4);
  }
  ~AbstractListener() { ::close(fd_); }

 private:
  int fd_ = -1;
};

TEST_F(SandboxIsolation, NetworkTrueIsNotTheHostsNetworkNamespace) {
  Listener listener;
  const std::string abstract_name = "relay-sandbox-test-" + std::to_string(::getpid());
  AbstractListener abstract(abstract_name);
  app_.file("net.py",
            "import socket\n"
            "def fn(event):\n"
            "    for host in ('127.0.0.1', 'localhost'):\n"
            "        try:\n"
            "            socket.create_connection((host, " +
                std::to_string(listener.port()) +
                "), timeout=2).close()\n"
                "            print('reached', host)\n"
                "        except OSError as error:\n"
                "            print('refused', host, error)\n"
                "    s = socket.socket(socket.AF_UNIX)\n"
                "    try:\n"
                "        s.connect('\\0" +
                abstract_name +
                "')\n"
                "        print('reached abstract')\n"
                "    except OSError as error:\n"
                "        print('refused abstract', error)\n"
                "    print(open('/proc/net/dev').read().count(':'), 'interfaces')\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "net.fn");
  spec.network = true;
  auto outcome = runOnce(*runtime_, spec, sink_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason << sink_.text("");
  EXPECT_FALSE(sink_.contains("reached")) << sink_.text("");
  EXPECT_TRUE(sink_.contains("refused 127.0.0.1")) << sink_.text("");
  EXPECT_TRUE(sink_.contains("refused abstract")) << sink_.text("");
}

TEST_F(SandboxIsolation, NetworkTrueReachesANonLoopbackAddressOutside) {
  auto egress = relay::testing::EgressNamespace::create();
  ASSERT_TRUE(egress.ok()) << egress.error().message;
  app_.file("net.py",
            "import socket\n"
            "def fn(event):\n"
            "    with socket.create_connection(('" +
                (*egress)->address() + "', " + std::to_string((*egress)->port()) +
                "), timeout=5) as c:\n"
                "        print(c.recv(100).decode().strip())\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "net.fn");
  spec.network = true;
  auto outcome = runOnce(*runtime_, spec, sink_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason << sink_.text("");
  EXPECT_TRUE(sink_.contains("egress-ok")) << sink_.text("");
  EXPECT_EQ((*egress)->accepted(), 1);
}

TEST_F(SandboxIsolation, WithoutNetworkANonLoopbackAddressIsUnreachableToo) {
  auto egress = relay::testing::EgressNamespace::create();
  ASSERT_TRUE(egress.ok()) << egress.error().message;
  app_.file("net.py",
            "import socket\n"
            "def fn(event):\n"
            "    socket.create_connection(('" +
                (*egress)->address() + "', " + std::to_string((*egress)->port()) +
                "), timeout=2).close()\n");
  auto outcome = runOnce(*runtime_, app_.spec(Language::kPython3, "net.fn"), sink_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_EQ((*egress)->accepted(), 0);
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
  auto outcome = runOnce(*runtime_, spec, sink_);
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
  // What a crashed Relay leaves: its invocation's directory in each controller's base, a
  // handler still inside, and no lock on the memory one (the kernel dropped it with the Relay).
  const std::vector<std::filesystem::path> stale = {
      layout.memory / "inv-0-stale", layout.pids / "inv-0-stale", layout.cpu / "inv-0-stale"};
  for (const auto& dir : stale) std::filesystem::create_directories(dir);
  const pid_t sleeper = ::fork();
  if (sleeper == 0) {
    ::execl("/bin/sleep", "sleep", "300", nullptr);
    ::_exit(127);
  }
  for (const auto& dir : stale) std::ofstream(dir / "cgroup.procs") << sleeper;
  auto fresh = SandboxRuntime::create(clock_, sandboxTestSettings());
  // Reaped by this start, or by a sandbox test starting beside it in another binary (they share
  // the base, and any Relay starting reaps what nobody holds; that one may still be removing
  // it): either way it goes, and the handler left in it is killed. (reapedAtStart()'s count:
  // CgroupManager's unit tests.)
  int status = 0;
  pid_t reaped = 0;
  const auto gone = [&] {
    if (reaped == 0) reaped = ::waitpid(sleeper, &status, WNOHANG);
    for (const auto& dir : stale) {
      if (std::filesystem::exists(dir)) return false;
    }
    return reaped != 0;
  };
  relay::testing::SpawnedProcess::waitUntil(gone, std::chrono::seconds(10));
  for (const auto& dir : stale) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  if (reaped == 0) {
    ::kill(sleeper, SIGKILL);  // not reaped: fail now, not after its 300 s
    ::waitpid(sleeper, &status, 0);
    FAIL() << "the crashed Relay's handler was not killed";
  }
  EXPECT_EQ(reaped, sleeper);
  EXPECT_TRUE(WIFSIGNALED(status));
}

// What follows is about finding the host's tools, the same for both builds: built once.
#if !defined(RELAY_TEST_BACKEND_PREWARMED)
TEST(SandboxRuntime, MissingBwrapMakesEveryAppUnavailable) {
  SystemClock clock;
  SandboxSettings settings = sandboxTestSettings();
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
  SandboxSettings settings = sandboxTestSettings();
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
  auto runtime = SandboxRuntime::create(clock, sandboxTestSettings());
  ASSERT_EQ(runtime->hostProblem(), "");
  // Debian 12's bwrap 0.8.0 has --disable-userns (docs/runtimes.md).
  EXPECT_TRUE(runtime->tools().bwrap_disable_userns);
}

TEST(SandboxRuntime, WithoutPastaNetworkAppsAreUnavailableNeverGivenTheHostNetwork) {
  SystemClock clock;
  relay::testing::TempDir bin;  // bwrap alone, no pasta
  ::chmod(bin.path().c_str(), 0755);
  std::filesystem::create_symlink("/usr/bin/bwrap", bin.path() / "bwrap");
  SandboxSettings settings = sandboxTestSettings();
  settings.search_path = bin.path().string();
  auto runtime = SandboxRuntime::create(clock, settings);
  ASSERT_EQ(runtime->hostProblem(), "");
  EXPECT_NE(runtime->networkProblem().find("pasta not found"), std::string::npos)
      << runtime->networkProblem();
  TestApp app;
  app.script("bin/h.sh", "true");
  InvocationSpec spec = app.spec(Language::kExec, "bin/h.sh");
  EXPECT_TRUE(runtime->availability(spec).available);
  spec.network = true;
  const Availability availability = runtime->availability(spec);
  EXPECT_FALSE(availability.available);
  EXPECT_NE(availability.reason.find("apt-get install passt"), std::string::npos)
      << availability.reason;
  CollectingSink sink;
  const auto outcome = runtime->run(spec, sink);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
}

TEST(SandboxRuntime, AppDirectoryUnreadableByTheSandboxUserIsUnavailable) {
  SystemClock clock;
  auto runtime = SandboxRuntime::create(clock, sandboxTestSettings());
  relay::testing::TempDir private_dir;  // 0700, owned by root
  private_dir.write("bin/h.sh", "#!/bin/sh\n", 0755);
  InvocationSpec spec;
  spec.app = "private";
  spec.app_dir = private_dir.path();
  spec.handler = "bin/h.sh";
  const Availability availability = runtime->availability(spec);
  EXPECT_FALSE(availability.available);
  EXPECT_NE(availability.reason.find("not readable by the app's sandbox user"), std::string::npos)
      << availability.reason;
}

#endif

}  // namespace
}  // namespace relay::runtime::testing
