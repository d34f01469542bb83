// What a hostile handler can and cannot do inside a docker runtime container
// (docs/runtimes.md "docker"), against a real dockerd.
#include <gtest/gtest.h>

#include "integration/docker/docker_fixture.h"
#include "runtime/sandbox/sandbox_identities.h"

namespace relay::runtime::testing {
namespace {

using namespace std::chrono_literals;

class DockerIsolation : public DockerFixture {};

// docs/runtimes.md "Identities": each app's containers run as a uid and gid of the app's own
// (issue 29 item 8: every container ran as 65534, so all apps shared that user's kernel limits).
TEST_F(DockerIsolation, RunsAsItsAppsOwnUserWithNoCapabilitiesAndNoNewPrivileges) {
  const InvocationSpec spec =
      script("id -u; id -g; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status");
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  const std::string id = std::to_string(SandboxIdentities().of(spec.app));
  EXPECT_EQ(
      output(spec),
      id + "\n" + id + "\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1");
  EXPECT_NE(id, "65534");
  // Another app, another user.
  InvocationSpec other = script("id -u");
  other.app = "otherapp";
  EXPECT_TRUE(mustRun(other).succeeded);
  const std::string other_id = std::to_string(SandboxIdentities().of("otherapp"));
  EXPECT_NE(other_id, id);
  EXPECT_TRUE(sink_.contains("[otherapp/bin/h.sh] " + other_id)) << output(other);
}

TEST_F(DockerIsolation, HasNoNetworkInterfaceButLoopbackUnlessEnabled) {
  const InvocationSpec spec = script("ls /sys/class/net");
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  EXPECT_EQ(output(spec), "lo");
}

TEST_F(DockerIsolation, RootFilesystemAndAppAreReadOnlyAndTmpIsAWritableTmpfs) {
  const InvocationSpec spec = script(
      "touch /new 2>/dev/null && echo root-writable; "
      "touch /app/new 2>/dev/null && echo app-writable; "
      "cat /app/bin/h.sh >/dev/null && echo app-readable; "
      "pwd; echo hi > /tmp/x && cat /tmp/x; "
      "grep ' /tmp ' /proc/mounts | cut -d' ' -f3; "
      "grep ' /tmp ' /proc/mounts | grep -q noexec && echo tmp-noexec");
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  EXPECT_EQ(output(spec), "app-readable\n/app\nhi\ntmpfs\ntmp-noexec");
}

TEST_F(DockerIsolation, PidsLimitStopsForking) {
  // Each background sleep holds a pid; the shell fails to fork once the limit is reached.
  InvocationSpec spec =
      script("i=0; while [ $i -lt 64 ]; do sleep 30 & i=$((i+1)); echo $i; done; echo all-forked");
  spec.resources.pids = 16;
  spec.timeout = 20s;
  const Outcome outcome = mustRun(spec);
  EXPECT_FALSE(outcome.succeeded);
  const std::string out = output(spec);
  EXPECT_EQ(out.find("all-forked"), std::string::npos) << out;
  EXPECT_TRUE(sink_.contains("can't fork")) << out;
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerIsolation, ForkBombIsContainedAndEndsAtTheTimeout) {
  InvocationSpec spec = script("bomb() { bomb | bomb & }; bomb; sleep 30");
  spec.resources.pids = 32;
  spec.timeout = 2s;
  const Outcome outcome = mustRun(spec);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_LT(outcome.duration, 15s);
  EXPECT_TRUE(containersOf(spec).empty());
  // The daemon (and this test process) are still fine: a next invocation runs normally.
  const Outcome after = mustRun(script("echo still-here"));
  EXPECT_TRUE(after.succeeded) << after.reason;
}

TEST_F(DockerIsolation, MemoryLimitKillsAnAllocationHog) {
  // The shell keeps the whole command substitution in memory.
  InvocationSpec spec = script("x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived");
  spec.resources.memory_bytes = 32ULL << 20;
  const Outcome outcome = mustRun(spec);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_EQ(outcome.reason, "signal 9 (out of memory)");
  EXPECT_FALSE(sink_.contains("survived"));
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerIsolation, CpuAndMemoryLimitsReachTheCgroup) {
  // cgroup v1 (this build machine) or v2 file names.
  InvocationSpec spec = script(
      "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us "
      "2>/dev/null || cat /sys/fs/cgroup/cpu.max; "
      "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || "
      "cat /sys/fs/cgroup/memory.max");
  spec.resources.cpus = 0.5;
  spec.resources.memory_bytes = 64ULL << 20;
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  const std::string out = output(spec);
  EXPECT_TRUE(out == "50000\n100000\n67108864" || out == "50000 100000\n67108864") << out;
}

}  // namespace
}  // namespace relay::runtime::testing
