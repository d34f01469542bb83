#include "runtime/child_process.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
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

// The exit of a started child (stdout and stderr discarded).
ChildProcess::Termination finish(ChildProcess& child) {
  NullSink sink;
  LineSplitter out("", sink), err("", sink);
  testing::FakeClock clock;
  auto termination = child.supervise("", out, err, clock, std::chrono::seconds(30),
                                     [&](int signal) { child.signalGroup(signal); });
  EXPECT_TRUE(termination.ok()) << termination.error().message;
  return termination.ok() ? *termination : ChildProcess::Termination{};
}

TEST(ChildProcess, AStepFailingBeforeExecIsReportedWithItsNameAndErrno) {
  LaunchOptions options;
  options.executable = "/bin/true";
  options.argv = {"true"};
  options.cwd = "/nonexistent-relay-test-directory";
  auto child = ChildProcess::spawn(options);
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(child.error().message,
            "cannot start /bin/true: changing directory failed: No such file or directory");
}

TEST(ChildProcess, AFailingExecIsReportedAndTheNextStartFromTheSameThreadSucceeds) {
  LaunchOptions missing;
  missing.executable = "/nonexistent-relay-test-program";
  missing.argv = {"program"};
  auto failed = ChildProcess::spawn(missing);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message,
            "cannot start /nonexistent-relay-test-program: executing failed: No such file or "
            "directory");
  // Nothing of the failed start is left over for the next one (it reuses the thread's stack).
  for (int i = 0; i < 3; ++i) {
    LaunchOptions options;
    options.executable = "/bin/sh";
    options.argv = {"sh", "-c", "exit 3"};
    auto child = ChildProcess::spawn(options);
    ASSERT_TRUE(child.ok()) << child.error().message;
    const ChildProcess::Termination termination = finish(**child);
    EXPECT_TRUE(termination.exited);
    EXPECT_EQ(termination.code, 3);
  }
}

// The side channel (a sandbox's start report): what the child wrote there before writing to
// stdout is delivered first, whatever the scheduling.
TEST(ChildProcess, TheSideChannelIsReadBeforeLaterOutput) {
  int status[2];
  ASSERT_EQ(::pipe2(status, O_CLOEXEC), 0);
  UniqueFd status_read(status[0]);
  UniqueFd status_write(status[1]);
  LaunchOptions options;
  options.executable = "/bin/sh";
  options.argv = {"sh", "-c", "for i in 1 2 3; do echo report$i >&3; echo out$i; done"};
  options.inherited_fds = {status_write.get()};  // fd 3 in the child
  auto child = ChildProcess::spawn(options);
  ASSERT_TRUE(child.ok()) << child.error().message;
  status_write.reset();
  struct Ordered final : OutputSink {
    void line(std::string_view text) override { events.emplace_back(text); }
    std::vector<std::string> events;
  } sink;
  LineSplitter out("", sink), err("", sink);
  std::string reported;
  const ChildProcess::SideChannel side{status_read.get(), [&](std::string_view bytes) {
                                         reported.append(bytes);
                                         sink.events.push_back("side:" + reported);
                                       }};
  testing::FakeClock clock;
  auto termination = (*child)->supervise(
      "", out, err, clock, std::chrono::seconds(30),
      [&](int signal) { (*child)->signalGroup(signal); }, &side);
  ASSERT_TRUE(termination.ok()) << termination.error().message;
  EXPECT_EQ(reported, "report1\nreport2\nreport3\n");
  for (const char* line : {"out1", "out2", "out3"}) {
    const auto at = std::find(sink.events.begin(), sink.events.end(), line);
    ASSERT_NE(at, sink.events.end()) << line;
    const std::string report = std::string("report") + line[3];
    // Some side event before this line already holds its report.
    EXPECT_TRUE(std::any_of(sink.events.begin(), at, [&](const std::string& event) {
      return event.rfind("side:", 0) == 0 && event.find(report) != std::string::npos;
    })) << line;
  }
}

}  // namespace
}  // namespace relay::runtime
