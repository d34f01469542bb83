// Prewarmed sandboxes (docs/runtimes.md "Prewarmed sandboxes") against real bubblewrap and
// cgroups: each serves one invocation, and nothing crosses from one invocation to the next.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "common/system_clock.h"
#include "integration/runtime/runtime_harness.h"
#include "integration/runtime/sandbox_harness.h"
#include "runtime/sandbox/prewarmed_sandbox.h"

namespace relay::runtime::testing {
namespace {

namespace fs = std::filesystem;

std::string fileContents(const fs::path& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

long long readNumber(const fs::path& file) {
  const std::string text = fileContents(file);
  return text.empty() ? -1 : std::stoll(text);
}

class PrewarmIsolation : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(runtime_->prewarmPool(), nullptr); }
  // Runs `spec` on a sandbox prepared for it (and checks that it did).
  Outcome runWarm(const InvocationSpec& spec) {
    auto outcome = runOnce(*runtime_, spec, sink_);
    EXPECT_TRUE(outcome.ok()) << outcome.error().message;
    return outcome.ok() ? *outcome : Outcome{};
  }
  PrewarmPool& pool() { return *runtime_->prewarmPool(); }
  // The memory controller's directory of a cgroup (v1: its memory hierarchy; v2: the one).
  static fs::path memoryDir(InvocationCgroup& cgroup) {
    return fs::path(cgroup.procsFiles().front()).parent_path();
  }
  // Our invocation cgroups that hold a process.
  int busyCgroups() const {
    const CgroupLayout& layout = runtime_->cgroups()->layout();
    const fs::path base = layout.version == CgroupVersion::kV2 ? layout.unified : layout.pids;
    int busy = 0;
    for (const auto& entry : fs::directory_iterator(base)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_directory() && name.rfind("inv-" + std::to_string(::getpid()) + "-", 0) == 0 &&
          !fileContents(entry.path() / "cgroup.procs").empty()) {
        ++busy;
      }
    }
    return busy;
  }

  SystemClock clock_;
  std::unique_ptr<SandboxRuntime> runtime_ = makeSandboxTestRuntime(clock_);
  TestApp app_;
  CollectingSink sink_;
};

TEST_F(PrewarmIsolation, NothingCrossesFromOneInvocationToTheNext) {
  app_.file("leave.py",
            "import ctypes, os, platform, subprocess\n"
            "def fn(event):\n"
            "    open('/tmp/left-behind', 'w').write('secret')\n"
            "    subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
            "    libc = ctypes.CDLL(None)\n"
            "    NR = {'x86_64': 248, 'aarch64': 217}[platform.machine()]  # add_key\n"
            "    libc.syscall(NR, b'user', b'relay-left-key', b'secret', 6, -3)\n"
            "    ballast = bytearray(64 << 20)\n"
            "    for i in range(0, len(ballast), 4096): ballast[i] = 1\n"
            "    print('first', os.environ['RELAY_MESSAGE_ID'])\n");
  app_.file("look.py",
            "import ctypes, os, platform\n"
            "def fn(event):\n"
            "    print('tmp', sorted(os.listdir('/tmp')))\n"
            "    cmds = []\n"
            "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
            "        try: cmds.append(open('/proc/%s/cmdline' % pid).read().replace('\\0', ' '))\n"
            "        except OSError: pass\n"
            "    print('sleeping', any(c.startswith('sleep') for c in cmds))\n"
            "    NR = {'x86_64': 250, 'aarch64': 219}[platform.machine()]  # keyctl\n"
            "    key = ctypes.CDLL(None).syscall(NR, 10, -3, b'user', b'relay-left-key', 0)\n"
            "    print('key found' if key > 0 else 'key not found')\n"
            "    print('message', os.environ['RELAY_MESSAGE_ID'], os.environ['RELAY_ATTEMPT'])\n"
            "    environ = open('/proc/self/environ').read() + repr(dict(os.environ))\n"
            "    print('previous message', '1-1' in environ)\n");
  InvocationSpec first = app_.spec(Language::kPython3, "leave.fn");
  first.message_id = "1-1";
  const Outcome left = runWarm(first);
  EXPECT_TRUE(left.succeeded) << left.reason << sink_.text("");
  EXPECT_TRUE(sink_.contains("first 1-1")) << sink_.text("");

  InvocationSpec second = app_.spec(Language::kPython3, "look.fn");
  second.message_id = "2-2";
  second.attempt = 3;
  const Outcome looked = runWarm(second);
  EXPECT_TRUE(looked.succeeded) << looked.reason << sink_.text("");
  EXPECT_TRUE(sink_.contains("tmp []")) << sink_.text("");
  EXPECT_TRUE(sink_.contains("sleeping False")) << sink_.text("");
  EXPECT_TRUE(sink_.contains("key not found")) << sink_.text("");  // KEYCTL_SEARCH of @s
  EXPECT_TRUE(sink_.contains("message 2-2 3")) << sink_.text("");
  EXPECT_TRUE(sink_.contains("previous message False")) << sink_.text("");
}

TEST_F(PrewarmIsolation, EachPreparedSandboxHasItsOwnFreshCgroupWithTheLimits) {
  app_.file("big.py",
            "def fn(event):\n"
            "    ballast = bytearray(64 << 20)\n"
            "    for i in range(0, len(ballast), 4096): ballast[i] = 1\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "big.fn");
  spec.resources.memory_bytes = 200 << 20;
  spec.resources.pids = 40;
  EXPECT_TRUE(runWarm(spec).succeeded) << sink_.text("");
  // The next sandbox of the same app, before its hand-over: its cgroup has only its own waiting
  // bwrap and launcher in it, none of the 64 MiB the previous invocation touched.
  prepareWarm(*runtime_, spec);
  std::unique_ptr<WarmSandbox> next = pool().take(spec);
  ASSERT_NE(next, nullptr);
  InvocationCgroup& cgroup = static_cast<PrewarmedSandbox&>(*next).cgroup();
  const fs::path memory = memoryDir(cgroup);
  const bool v2 = runtime_->cgroups()->layout().version == CgroupVersion::kV2;
  const long long peak = readNumber(memory / (v2 ? "memory.peak" : "memory.max_usage_in_bytes"));
  EXPECT_GT(peak, 0);
  EXPECT_LT(peak, 32LL << 20);
  EXPECT_EQ(readNumber(memory / (v2 ? "memory.max" : "memory.limit_in_bytes")), 200LL << 20);
  const fs::path pids = v2 ? memory : fs::path(cgroup.procsFiles()[1]).parent_path();
  EXPECT_EQ(readNumber(pids / "pids.max"), 40);
  EXPECT_GE(readNumber(pids / "pids.current"), 1);
  EXPECT_LE(readNumber(pids / "pids.current"), 3);  // bwrap, its init, the launcher
  // One CPU (the default) per 100 ms period, whether the period was written or a new cgroup
  // already had it; swap does not extend the memory limit where it is accounted.
  if (v2) {
    EXPECT_EQ(fileContents(memory / "cpu.max"), "100000 100000\n");
  } else {
    const fs::path cpu = fs::path(cgroup.procsFiles()[2]).parent_path();
    EXPECT_EQ(readNumber(cpu / "cpu.cfs_period_us"), 100000);
    EXPECT_EQ(readNumber(cpu / "cpu.cfs_quota_us"), 100000);
    if (fs::exists(memory / "memory.memsw.limit_in_bytes")) {
      EXPECT_EQ(readNumber(memory / "memory.memsw.limit_in_bytes"), 200LL << 20);
    }
  }
}

TEST_F(PrewarmIsolation, AnUnusedSandboxIsEndedWhenItsAppIsForgotten) {
  app_.script("bin/ok.sh", "exit 0");
  const InvocationSpec spec = app_.spec(Language::kExec, "bin/ok.sh");
  prepareWarm(*runtime_, spec);
  EXPECT_GE(busyCgroups(), 1);
  runtime_->forget(spec.app);  // its template changed
  EXPECT_EQ(pool().ready(spec.app), 0u);
  EXPECT_EQ(busyCgroups(), 0);  // its bwrap and launcher are gone with their cgroup
}

}  // namespace
}  // namespace relay::runtime::testing
