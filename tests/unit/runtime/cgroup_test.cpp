#include "runtime/sandbox/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/unique_fd.h"
#include "fakes/fake_clock.h"
#include "fakes/temp_dir.h"

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A v2 layout whose base, `own/relay`, exists under `dir`.
CgroupLayout v2Layout(const testing::TempDir& dir) {
  CgroupLayout layout;
  layout.version = CgroupVersion::kV2;
  layout.unified = dir.path() / "own/relay";
  fs::create_directories(layout.unified);
  return layout;
}

// A v1 layout with a `<controller>/relay` base per controller under `dir` (made by create()).
CgroupLayout v1Layout(const testing::TempDir& dir) {
  CgroupLayout layout;
  layout.version = CgroupVersion::kV1;
  layout.memory = dir.path() / "memory/relay";
  layout.pids = dir.path() / "pids/relay";
  layout.cpu = dir.path() / "cpu/relay";
  return layout;
}

TEST(CgroupLayout, DetectsV1ControllersUnderOwnCgroup) {
  testing::TempDir dir;
  const auto mounts = dir.write("mounts",
                                "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
                                "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
                                "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n");
  const auto self = dir.write("cgroup", "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n");
  const auto layout = detectCgroupLayout(mounts, self, "relay-sandbox");
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  EXPECT_EQ(layout->version, CgroupVersion::kV1);
  EXPECT_EQ(layout->memory, "/sys/fs/cgroup/memory/process_api/abc/relay-sandbox");
  EXPECT_EQ(layout->pids, "/sys/fs/cgroup/pids/relay-sandbox");
  EXPECT_EQ(layout->cpu, "/sys/fs/cgroup/cpu/relay-sandbox");
}

TEST(CgroupLayout, DetectsV2WhenTheMemoryControllerIsThere) {
  testing::TempDir dir;
  dir.write("unified/cgroup.controllers", "cpuset cpu io memory pids\n");
  const auto mounts =
      dir.write("mounts", "cgroup2 " + (dir.path() / "unified").string() + " cgroup2 rw 0 0\n");
  const auto self = dir.write("cgroup", "0::/system.slice/relay.service\n");
  const auto layout = detectCgroupLayout(mounts, self, "relay-sandbox");
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  EXPECT_EQ(layout->version, CgroupVersion::kV2);
  EXPECT_EQ(layout->unified, dir.path() / "unified/system.slice/relay.service/relay-sandbox");
}

TEST(CgroupLayout, NoHierarchyIsAClearError) {
  testing::TempDir dir;
  const auto mounts = dir.write("mounts", "proc /proc proc rw 0 0\n");
  const auto self = dir.write("cgroup", "0::/\n");
  const auto layout = detectCgroupLayout(mounts, self, "relay-sandbox");
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.error().message.find("memory"), std::string::npos);
}

TEST(CgroupManager, V1InvocationGetsEveryLimit) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v1Layout(dir);
  auto manager = CgroupManager::create(layout, clock);
  ASSERT_TRUE(manager.ok()) << manager.error().message;
  Resources resources;
  resources.memory_bytes = 64 << 20;
  resources.cpus = 0.5;
  resources.pids = 32;
  auto cgroup = (*manager)->createInvocation(resources);
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().message;
  const auto files = (*cgroup)->procsFiles();
  ASSERT_EQ(files.size(), 3u);
  const fs::path memory = fs::path(files[0]).parent_path();
  EXPECT_EQ(read(memory / "memory.limit_in_bytes"), std::to_string(64 << 20));
  EXPECT_EQ(read(fs::path(files[1]).parent_path() / "pids.max"), "32");
  EXPECT_EQ(read(fs::path(files[2]).parent_path() / "cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(read(fs::path(files[2]).parent_path() / "cpu.cfs_period_us"), "100000");
  EXPECT_EQ((*cgroup)->directoryFd(), -1);  // v1 processes join by writing cgroup.procs
}

TEST(CgroupManager, V1SwapCannotExtendTheMemoryLimitWhereTheHostAccountsIt) {
  for (const bool accounted : {false, true}) {
    testing::TempDir dir;
    testing::FakeClock clock;
    const CgroupLayout layout = v1Layout(dir);
    // The base has the file exactly when swap is accounted (then every cgroup has it).
    if (accounted) dir.write("memory/relay/memory.memsw.limit_in_bytes", "9223372036854771712\n");
    auto manager = CgroupManager::create(layout, clock);
    ASSERT_TRUE(manager.ok()) << manager.error().message;
    Resources resources;
    resources.memory_bytes = 64 << 20;
    for (int invocation = 0; invocation < 2; ++invocation) {
      auto cgroup = (*manager)->createInvocation(resources);
      ASSERT_TRUE(cgroup.ok()) << cgroup.error().message;
      const fs::path memsw =
          fs::path((*cgroup)->procsFiles()[0]).parent_path() / "memory.memsw.limit_in_bytes";
      EXPECT_EQ(fs::exists(memsw), accounted);
      if (accounted) {
        EXPECT_EQ(read(memsw), std::to_string(64 << 20));
      }
    }
  }
}

TEST(CgroupManager, CgroupsOfAnEarlierProcessWithOurPidAreReapedOursAreNot) {
  // PID 1 (or 2) of a restarted container has the pid of the Relay that crashed before it.
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  auto first = CgroupManager::create(layout, clock);
  ASSERT_TRUE(first.ok());
  auto ours = (*first)->createInvocation(Resources{});
  ASSERT_TRUE(ours.ok()) << ours.error().message;
  const fs::path ours_dir = fs::path((*ours)->procsFiles()[0]).parent_path();
  const std::string pid = std::to_string(::getpid());
  ASSERT_EQ(ours_dir.filename().string().rfind("inv-" + pid + "-", 0), 0u) << ours_dir;
  // The same pid, another start time: what an earlier incarnation left, held by no one.
  const fs::path earlier = layout.unified / ("inv-" + pid + "-1-0");
  fs::create_directories(earlier);
  auto second = CgroupManager::create(layout, clock);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->reapedAtStart(), 1);
  EXPECT_FALSE(fs::exists(earlier));
  EXPECT_TRUE(fs::exists(ours_dir)) << "this process's own cgroup is in use";
  // Both managers of this process name their cgroups apart.
  auto other = (*second)->createInvocation(Resources{});
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_NE(fs::path((*other)->procsFiles()[0]).parent_path(), ours_dir);
}

// Ownership is a lock each live Relay holds on its cgroups, valid across pid namespaces: a
// pid means nothing to a Relay in another pid namespace (docs/runtimes.md "sandbox").
TEST(CgroupManager, ACgroupAnotherLiveRelayHoldsIsKeptWhateverItsPidSays) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  // A Relay in another pid namespace: its pid does not exist here, but it holds the lock.
  const fs::path theirs = layout.unified / "inv-2147483000-42-0";
  fs::create_directories(theirs);
  const UniqueFd held(::open(theirs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(held.valid());
  ASSERT_EQ(::flock(held.get(), LOCK_EX | LOCK_NB), 0);
  auto manager = CgroupManager::create(layout, clock);
  ASSERT_TRUE(manager.ok()) << manager.error().message;
  EXPECT_EQ((*manager)->reapedAtStart(), 0);
  EXPECT_TRUE(fs::exists(theirs));
}

TEST(CgroupManager, ACgroupNobodyHoldsIsReapedEvenWhenItsPidIsAlive) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  // Named after a live pid (this namespace's init), left by a Relay that is gone: in another
  // pid namespace that number is some unrelated process.
  const fs::path left = layout.unified / "inv-1-42-0";
  fs::create_directories(left);
  auto manager = CgroupManager::create(layout, clock);
  ASSERT_TRUE(manager.ok()) << manager.error().message;
  EXPECT_EQ((*manager)->reapedAtStart(), 1);
  EXPECT_FALSE(fs::exists(left));
}

// v1: two Relays whose memory cgroups differ (a test's memory limit, a host that delegates
// only memory per service) share the pids and cpu bases. The one starting now cannot see the
// other's locks (they are on memory directories it does not have) and must not take its names
// in the shared bases for a crashed Relay's: that killed a live handler's sandbox (SIGKILL
// before it started) and removed its prepared cgroups from under it.
TEST(CgroupManager, V1ARelayWithAnotherMemoryCgroupLeavesTheSharedBasesAlone) {
  testing::TempDir dir;
  testing::FakeClock clock;
  CgroupLayout theirs = v1Layout(dir);
  theirs.memory = dir.path() / "memory/theirs/relay";
  CgroupLayout ours = v1Layout(dir);
  ours.memory = dir.path() / "memory/ours/relay";
  auto them = CgroupManager::create(theirs, clock);
  ASSERT_TRUE(them.ok()) << them.error().message;
  auto running = (*them)->createInvocation(Resources{});
  ASSERT_TRUE(running.ok()) << running.error().message;
  (*them)->prepare(Resources{});
  // A process in their invocation's pids cgroup (its process list, as the kernel keeps it).
  const pid_t test = ::getpid();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Gone with the test binary whatever happens below (a failed ASSERT returns before the
    // kill): a child left behind would hold ctest's output pipe open. Checked after prctl, as
    // ChildProcess does: a parent gone before it would never send the signal.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != test) ::_exit(0);
    ::pause();
    ::_exit(0);
  }
  const fs::path pids_dir = fs::path((*running)->procsFiles()[1]).parent_path();
  std::ofstream(pids_dir / "cgroup.procs") << child << "\n";
  std::vector<fs::path> shared;
  for (const fs::path& base : {theirs.pids, theirs.cpu}) {
    for (const auto& entry : fs::directory_iterator(base)) {
      if (entry.path().filename().string().rfind("inv-", 0) == 0) shared.push_back(entry.path());
    }
  }
  ASSERT_EQ(shared.size(), 4u);  // the running and the prepared cgroup, in pids and in cpu

  auto us = CgroupManager::create(ours, clock);
  ASSERT_TRUE(us.ok()) << us.error().message;
  EXPECT_EQ((*us)->reapedAtStart(), 0);
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, WNOHANG), 0) << "their handler was killed";
  for (const fs::path& path : shared) EXPECT_TRUE(fs::exists(path)) << path;
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  std::ofstream(pids_dir / "cgroup.procs", std::ios::trunc).flush();
}

TEST(CgroupManager, EveryCgroupIsHeldWhileItsOwnerLives) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  auto manager = CgroupManager::create(layout, clock);
  ASSERT_TRUE(manager.ok());
  auto cgroup = (*manager)->createInvocation(Resources{});
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().message;
  (*manager)->prepare(Resources{});
  std::size_t held = 0;
  for (const auto& entry : fs::directory_iterator(layout.unified)) {
    if (entry.path().filename().string().rfind("inv-", 0) != 0) continue;
    const UniqueFd probe(::open(entry.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(probe.valid());
    EXPECT_EQ(::flock(probe.get(), LOCK_EX | LOCK_NB), -1) << entry.path();
    EXPECT_EQ(errno, EWOULDBLOCK);
    ++held;
  }
  EXPECT_EQ(held, 2u);  // the one in use and the prepared one
}

TEST(CgroupManager, APreparedCgroupServesOneInvocationWithTheSameLimitsThenIsGone) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  auto manager = CgroupManager::create(layout, clock, 2);
  ASSERT_TRUE(manager.ok());
  Resources small;
  small.memory_bytes = 32 << 20;
  (*manager)->prepare(small);
  EXPECT_EQ((*manager)->preparedCount(), 1u);
  std::vector<fs::path> made;
  for (const auto& entry : fs::directory_iterator(layout.unified)) {
    if (entry.is_directory()) made.push_back(entry.path());
  }
  ASSERT_EQ(made.size(), 1u);
  // Other limits: a new cgroup, the prepared one keeps waiting.
  auto other = (*manager)->createInvocation({});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(fs::path((*other)->procsFiles()[0]).parent_path(), made[0]);
  EXPECT_EQ((*manager)->preparedCount(), 1u);
  auto first = (*manager)->createInvocation(small);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(fs::path((*first)->procsFiles()[0]).parent_path(), made[0]);
  EXPECT_EQ(read(made[0] / "memory.max"), std::to_string(32 << 20));
  EXPECT_EQ((*manager)->preparedCount(), 0u);
  auto second = (*manager)->createInvocation(small);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(fs::path((*second)->procsFiles()[0]).parent_path(), made[0]);
}

TEST(CgroupManager, PreparesAtMostOneCgroupPerSlot) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  auto manager = CgroupManager::create(layout, clock, 3);
  ASSERT_TRUE(manager.ok());
  for (int i = 0; i < 5; ++i) (*manager)->prepare({});
  EXPECT_EQ((*manager)->preparedCount(), 3u);
}

TEST(CgroupManager, SandboxesTogetherWeighAsMuchAsTheirSlotsOfOrdinaryProcesses) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout v1 = v1Layout(dir);
  ASSERT_TRUE(CgroupManager::create(v1, clock, 16).ok());
  EXPECT_EQ(read(v1.cpu / "cpu.shares"), "16384");  // 16 x the kernel's default 1024
  CgroupLayout v2;
  v2.version = CgroupVersion::kV2;
  v2.unified = dir.path() / "own/relay";
  fs::create_directories(v2.unified);
  ASSERT_TRUE(CgroupManager::create(v2, clock, 4).ok());
  EXPECT_EQ(read(v2.unified / "cpu.weight"), "400");  // 4 x the default 100
  ASSERT_TRUE(CgroupManager::create(v2, clock, 500).ok());
  EXPECT_EQ(read(v2.unified / "cpu.weight"), "10000");  // the kernel's maximum
}

TEST(CgroupManager, V2DelegatesControllersAndSetsLimits) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  auto manager = CgroupManager::create(layout, clock);
  ASSERT_TRUE(manager.ok()) << manager.error().message;
  EXPECT_EQ(read(dir.path() / "own/cgroup.subtree_control"), "+memory +pids +cpu");
  EXPECT_EQ(read(dir.path() / "own/relay/cgroup.subtree_control"), "+memory +pids +cpu");
  Resources resources;
  resources.cpus = 2;
  auto cgroup = (*manager)->createInvocation(resources);
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().message;
  const fs::path inv = fs::path((*cgroup)->procsFiles().at(0)).parent_path();
  EXPECT_EQ(read(inv / "memory.max"), std::to_string(256 << 20));
  EXPECT_EQ(read(inv / "memory.swap.max"), "0");
  EXPECT_EQ(read(inv / "pids.max"), "128");
  EXPECT_EQ(read(inv / "cpu.max"), "200000 100000");
  EXPECT_GE((*cgroup)->directoryFd(), 0);  // for CLONE_INTO_CGROUP
}

TEST(CgroupManager, OomKillIsReadFromTheControllersCounter) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const CgroupLayout layout = v2Layout(dir);
  auto manager = CgroupManager::create(layout, clock);
  ASSERT_TRUE(manager.ok());
  auto cgroup = (*manager)->createInvocation({});
  ASSERT_TRUE(cgroup.ok());
  const fs::path inv = fs::path((*cgroup)->procsFiles().at(0)).parent_path();
  std::ofstream(inv / "memory.events") << "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n";
  EXPECT_FALSE((*cgroup)->oomKilled());
  std::ofstream(inv / "memory.events") << "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n";
  EXPECT_TRUE((*cgroup)->oomKilled());
}

}  // namespace
}  // namespace relay::runtime
