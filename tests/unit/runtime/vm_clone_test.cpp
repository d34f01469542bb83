#include "runtime/vm_clone.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

// What a child reports: it shares the test's memory, so it writes here directly.
struct Report {
  int value = 0;
  sigset_t mask{};
  char cgroup[512] = {};
};

int exitSeven(void* report) {
  static_cast<Report*>(report)->value = 42;
  ::_exit(7);
}

int recordMask(void* report) {
  ::syscall(SYS_rt_sigprocmask, SIG_BLOCK, nullptr, &static_cast<Report*>(report)->mask,
            sizeof(long));
  ::_exit(0);
}

int readOwnCgroup(void* report) {
  auto* r = static_cast<Report*>(report);
  const int fd = ::open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) ::_exit(1);
  const ssize_t n = ::read(fd, r->cgroup, sizeof r->cgroup - 1);
  ::close(fd);
  ::_exit(n > 0 ? 0 : 1);
}

// Two children alive at once, each started by its own thread.
struct Overlap {
  std::atomic<int> running{0};
  std::uintptr_t stack[2] = {};
};

struct OverlapSlot {
  Overlap* overlap;
  int index;
};

// Records where its stack is, then waits (bounded) until the other child runs too: exits 0 when
// both were alive at once.
int meetTheOther(void* slot) {
  auto* s = static_cast<OverlapSlot*>(slot);
  int local = 0;
  s->overlap->stack[s->index] = reinterpret_cast<std::uintptr_t>(&local);
  s->overlap->running.fetch_add(1);
  for (long spins = 0; s->overlap->running.load() < 2; ++spins) {
    if (spins > 5'000'000) ::_exit(1);
    ::syscall(SYS_sched_yield);
  }
  ::_exit(0);
}

int exitStatus(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// A cgroup v2 mount point where this process may create a cgroup; empty when there is none.
std::string writableCgroup2Mount() {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, point, type, rest;
  while (mounts >> device >> point >> type && std::getline(mounts, rest)) {
    if (type == "cgroup2" && ::access(point.c_str(), W_OK) == 0) return point;
  }
  return {};
}

TEST(VmClone, ChildRunsOnTheCallersMemoryAndTheCallerResumesWhenItIsDone) {
  Report report;
  const VmClone child = cloneVm(exitSeven, &report);
  ASSERT_GT(child.pid, 0) << std::strerror(errno);
  EXPECT_FALSE(child.in_cgroup);
  // No copy: the child's write is in our memory, and it happened before cloneVm returned.
  EXPECT_EQ(report.value, 42);
  EXPECT_EQ(exitStatus(child.pid), 7);
}

TEST(VmClone, ChildStartsWithEverySignalBlockedAndTheCallersMaskIsRestored) {
  sigset_t before;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &before);
  Report report;
  const VmClone child = cloneVm(recordMask, &report);
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(exitStatus(child.pid), 0);
  EXPECT_TRUE(sigismember(&report.mask, SIGTERM));
  EXPECT_TRUE(sigismember(&report.mask, SIGCHLD));
  sigset_t after;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_EQ(sigismember(&after, SIGTERM), sigismember(&before, SIGTERM));
}

TEST(VmClone, ChildStartsInsideTheGivenCgroupV2Directory) {
  const std::string mount = writableCgroup2Mount();
  if (mount.empty()) GTEST_SKIP() << "no writable cgroup v2 mount here";
  const std::string name = "relay-vm-clone-test-" + std::to_string(::getpid());
  const std::string dir = mount + "/" + name;
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir << ": " << std::strerror(errno);
  const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Report report;
  bool started_in_cgroup = false;
  const VmClone child = cloneVm(readOwnCgroup, &report, fd, &started_in_cgroup);
  ::close(fd);
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(exitStatus(child.pid), 0);
  EXPECT_TRUE(child.in_cgroup);
  EXPECT_TRUE(started_in_cgroup);
  // The v2 line of /proc/self/cgroup is `0::<path>`, relative to our cgroup namespace's root.
  EXPECT_NE(std::string(report.cgroup).find("0::/" + name + "\n"), std::string::npos)
      << report.cgroup;
  EXPECT_EQ(::rmdir(dir.c_str()), 0) << std::strerror(errno);  // empty again: nothing left
}

TEST(VmClone, FallsBackToAPlainCloneWhenTheCgroupCannotBeEntered) {
  const int not_a_cgroup = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(not_a_cgroup, 0);
  Report report;
  bool started_in_cgroup = true;
  const VmClone child = cloneVm(exitSeven, &report, not_a_cgroup, &started_in_cgroup);
  ::close(not_a_cgroup);
  ASSERT_GT(child.pid, 0);
  EXPECT_FALSE(child.in_cgroup);
  EXPECT_FALSE(started_in_cgroup);  // the child was told to join by itself
  EXPECT_EQ(report.value, 42);
  EXPECT_EQ(exitStatus(child.pid), 7);
}

TEST(VmClone, ChildrenOfTwoThreadsRunAtOnceOnStacksOfTheirOwn) {
  Overlap overlap;
  int status[2] = {-1, -1};
  std::thread threads[2];
  for (int i = 0; i < 2; ++i) {
    threads[i] = std::thread([&overlap, &status, i] {
      OverlapSlot slot{&overlap, i};
      const VmClone child = cloneVm(meetTheOther, &slot);
      status[i] = child.pid > 0 ? exitStatus(child.pid) : -1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(status[0], 0);
  EXPECT_EQ(status[1], 0);
  const std::uintptr_t distance = overlap.stack[0] > overlap.stack[1]
                                      ? overlap.stack[0] - overlap.stack[1]
                                      : overlap.stack[1] - overlap.stack[0];
  EXPECT_GE(distance, 64U * 1024U);  // not one stack shared by both children
}

}  // namespace
}  // namespace relay::runtime
