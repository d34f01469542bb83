#include "runtime/sandbox/cgroup_view.h"

#include <gtest/gtest.h>

#include "fakes/temp_dir.h"
#include "runtime/sandbox/cgroup.h"
#include "runtime/sandbox/host_diagnosis.h"

namespace relay::runtime {
namespace {

// What Docker mounts in a container on a cgroup v1 host (seen on the development machine).
constexpr const char* kDockerV1Mounts =
    "tmpfs /sys/fs/cgroup tmpfs rw,nosuid,nodev,noexec,relatime,mode=755 0 0\n"
    "cgroup /sys/fs/cgroup/cpu cgroup ro,nosuid,nodev,noexec,relatime,cpu 0 0\n"
    "cgroup /sys/fs/cgroup/memory cgroup ro,nosuid,nodev,noexec,relatime,memory 0 0\n"
    "cgroup /sys/fs/cgroup/pids cgroup ro,nosuid,nodev,noexec,relatime,pids 0 0\n"
    "systemd /sys/fs/cgroup/systemd cgroup ro,nosuid,nodev,noexec,relatime,name=systemd 0 0\n";

TEST(CgroupMounts, DockersV1MountsAreReadOnlyWithTheirControllers) {
  testing::TempDir dir;
  const auto mounts = readCgroupMounts(dir.write("mounts", kDockerV1Mounts));
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[1].mount_point, "/sys/fs/cgroup/memory");
  EXPECT_EQ(mounts[1].controllers(), std::vector<std::string>{"memory"});
  EXPECT_EQ(mounts[3].controllers(), std::vector<std::string>{"name=systemd"});
  EXPECT_TRUE(sandboxCgroupsReadOnly(mounts));
}

TEST(CgroupMounts, ALaterMountOnTheSamePointShadowsTheEarlierOne) {
  testing::TempDir dir;
  // What enterWritableCgroupView leaves: the hierarchies mounted again, read-write, on top.
  const auto mounts = readCgroupMounts(dir.write(
      "mounts",
      std::string(kDockerV1Mounts) +
          "tmpfs /sys/fs/cgroup tmpfs rw,nosuid,nodev,noexec,relatime,mode=755 0 0\n"
          "cgroup /sys/fs/cgroup/cpu cgroup rw,nosuid,nodev,noexec,relatime,cpu 0 0\n"
          "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0\n"
          "cgroup /sys/fs/cgroup/pids cgroup rw,nosuid,nodev,noexec,relatime,pids 0 0\n"));
  EXPECT_FALSE(sandboxCgroupsReadOnly(mounts));
}

TEST(CgroupMounts, AReadOnlyHierarchyTheSandboxDoesNotUseDoesNotCount) {
  testing::TempDir dir;
  const auto mounts =
      readCgroupMounts(dir.write("mounts",
                                 "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
                                 "cgroup /sys/fs/cgroup/pids cgroup rw,pids 0 0\n"
                                 "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"
                                 "cgroup /sys/fs/cgroup/freezer cgroup ro,freezer 0 0\n"));
  EXPECT_FALSE(sandboxCgroupsReadOnly(mounts));
}

TEST(CgroupMounts, ReadOnlyCgroup2CountsAndNoHierarchyIsNotReadOnly) {
  testing::TempDir dir;
  EXPECT_TRUE(sandboxCgroupsReadOnly(readCgroupMounts(dir.write(
      "v2", "cgroup2 /sys/fs/cgroup cgroup2 ro,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n"))));
  EXPECT_FALSE(
      sandboxCgroupsReadOnly(readCgroupMounts(dir.write("none", "proc /proc proc rw 0 0\n"))));
}

TEST(CgroupView, NothingHappensWhereTheCgroupsAreWritable) {
  testing::TempDir dir;
  auto entered = enterWritableCgroupView(
      dir.write("mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev 0 0\n"));
  ASSERT_TRUE(entered.ok()) << entered.error().message;
  EXPECT_FALSE(*entered);
}

TEST(CgroupLayout, TheVisibleMountOfAControllerIsTheLastOne) {
  testing::TempDir dir;
  const auto mounts = dir.write("mounts", std::string(kDockerV1Mounts) +
                                              "cgroup /view/memory cgroup rw,memory 0 0\n"
                                              "cgroup /view/pids cgroup rw,pids 0 0\n"
                                              "cgroup /view/cpu cgroup rw,cpu 0 0\n");
  const auto self = dir.write("cgroup", "8:pids:/\n4:memory:/\n1:cpu:/\n0::/\n");
  const auto layout = detectCgroupLayout(mounts, self, "relay-sandbox");
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  EXPECT_EQ(layout->memory, "/view/memory/relay-sandbox");
  EXPECT_EQ(layout->cpu, "/view/cpu/relay-sandbox");
}

TEST(CgroupLeaf, EveryProcessOfTheCgroupMovesIntoTheLeaf) {
  testing::TempDir dir;
  dir.write("own/cgroup.procs", "1\n42\n");
  dir.write("own/relay-main/cgroup.procs", "");
  auto moved = moveProcessesToLeaf(dir.path() / "own", "relay-main");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_EQ(*moved, 2);
  EXPECT_EQ(dir.read("own/relay-main/cgroup.procs"), "1\n42\n");
}

TEST(SandboxFix, EachFailureOfBwrapGetsItsLayersFix) {
  HostFacts container;
  container.in_container = true;
  container.seccomp_filtered = true;
  const std::string userns = fixForSandboxFailure(
      "bwrap: No permissions to create new namespace, likely because the kernel does not allow "
      "non-privileged user namespaces",
      container);
  EXPECT_NE(userns.find("seccomp=seccomp.json"), std::string::npos) << userns;
  const std::string proc = fixForSandboxFailure(
      "bwrap: Can't mount proc on /newroot/proc: Operation not permitted", container);
  EXPECT_NE(proc.find("systempaths=unconfined"), std::string::npos) << proc;
  EXPECT_NE(proc.find("procMount: Unmasked"), std::string::npos) << proc;
  const std::string tun = fixForSandboxFailure("Failed to open tun socket in namespace", container);
  EXPECT_NE(tun.find("--device /dev/net/tun"), std::string::npos) << tun;
  EXPECT_EQ(fixForSandboxFailure("something else entirely", container), "");
}

TEST(SandboxFix, AHostSysctlIsNamedBeforeAnyContainerOption) {
  HostFacts ubuntu;
  ubuntu.in_container = true;
  ubuntu.seccomp_filtered = true;
  ubuntu.apparmor_restrict_userns = "1";
  EXPECT_NE(fixForSandboxFailure("bwrap: No permissions to create new namespace", ubuntu)
                .find("kernel.apparmor_restrict_unprivileged_userns=0"),
            std::string::npos);
  HostFacts debian;
  debian.unprivileged_userns_clone = "0";
  EXPECT_NE(fixForSandboxFailure("bwrap: No permissions to create new namespace", debian)
                .find("kernel.unprivileged_userns_clone=1"),
            std::string::npos);
}

TEST(SandboxFix, ProcUnderSystemdNamesTheUnitsSettings) {
  HostFacts systemd;
  systemd.under_systemd = true;
  EXPECT_NE(fixForSandboxFailure(
                "bwrap: Can't mount proc on /newroot/proc: Operation not permitted", systemd)
                .find("ProtectKernelTunables"),
            std::string::npos);
}

TEST(SandboxFix, ReadOnlyCgroupsNameWhatRefusedTheView) {
  HostFacts container;
  container.in_container = true;
  container.seccomp_filtered = true;
  EXPECT_NE(fixForReadOnlyCgroups("unshare(CLONE_NEWUSER): Operation not permitted", container)
                .find("seccomp=seccomp.json"),
            std::string::npos);
  EXPECT_NE(fixForReadOnlyCgroups("cannot write the new user namespace's uid_map", container)
                .find("SETFCAP"),
            std::string::npos);
}

}  // namespace
}  // namespace relay::runtime
