#include "runtime/child_process.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"

namespace relay::runtime {
namespace {

struct NullSink final : OutputSink {
  void line(std::string_view) override {}
};

TEST(ChildProcess, DroppingPrivilegesInTheChildLeavesTheCallersThreadsAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop privileges";
  // Another thread of the caller, alive while the child drops to nobody: the child shares the
  // caller's memory until exec, and must not change the credentials of the caller's threads.
  std::mutex mutex;
  std::condition_variable changed;
  bool spawned = false;
  long other_thread_uid = -1;
  std::thread other([&] {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return spawned; });
    other_thread_uid = ::syscall(SYS_getuid);  // per thread, unlike glibc's getuid cache
  });
  LaunchOptions options;
  options.executable = "/bin/sh";
  options.argv = {"sh", "-c", "test \"$(id -u)\" = 65534"};
  options.uid = 65534;
  options.gid = 65534;
  auto child = ChildProcess::spawn(options);
  ASSERT_TRUE(child.ok()) << child.error().message;
  {
    std::lock_guard lock(mutex);
    spawned = true;
  }
  changed.notify_all();
  other.join();
  EXPECT_EQ(other_thread_uid, 0);
  EXPECT_EQ(::syscall(SYS_getuid), 0);
  NullSink sink;
  LineSplitter out("", sink), err("", sink);
  testing::FakeClock clock;
  auto termination = (*child)->supervise("", out, err, clock, std::chrono::seconds(30),
                                         [&](int signal) { (*child)->signalGroup(signal); });
  ASSERT_TRUE(termination.ok()) << termination.error().message;
  EXPECT_TRUE(termination->exited);
  EXPECT_EQ(termination->code, 0);  // the child itself did run as nobody
}

}  // namespace
}  // namespace relay::runtime
