#include "common/poll.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/system_clock.h"
#include "common/unique_fd.h"
#include "fakes/fake_clock.h"

namespace relay {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    read_end = UniqueFd(fds[0]);
    write_end = UniqueFd(fds[1]);
  }
  UniqueFd read_end;
  UniqueFd write_end;
};

TEST(PollUntil, ReturnsTheEventsOfAReadyDescriptor) {
  SystemClock clock;
  Pipe pipe;
  ASSERT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
  auto ready = pollUntil(clock, pipe.read_end.get(), POLLIN, clock.monotonicNow() + hours(1));
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  EXPECT_EQ(*ready & POLLIN, POLLIN);
}

TEST(PollUntil, ReturnsZeroWhenTheDeadlinePassesWithNothingReady) {
  SystemClock clock;
  Pipe pipe;
  auto ready =
      pollUntil(clock, pipe.read_end.get(), POLLIN, clock.monotonicNow() + milliseconds(30));
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  EXPECT_EQ(*ready, 0);
}

TEST(PollUntil, APassedDeadlineStillAsksTheDescriptorOnce) {
  SystemClock clock;
  Pipe pipe;
  ASSERT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
  auto ready = pollUntil(clock, pipe.read_end.get(), POLLIN, clock.monotonicNow() - hours(1));
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  EXPECT_EQ(*ready & POLLIN, POLLIN);
}

TEST(PollUntil, ReportsTheHangUpOfAClosedPeer) {
  SystemClock clock;
  Pipe pipe;
  pipe.write_end.reset();
  auto ready = pollUntil(clock, pipe.read_end.get(), POLLIN, clock.monotonicNow() + hours(1));
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  EXPECT_EQ(*ready & POLLHUP, POLLHUP);
}

TEST(PollUntil, NoticesAnInjectedClockMovedPastTheDeadline) {
  testing::FakeClock clock;
  Pipe pipe;
  std::atomic<bool> returned = false;
  std::thread mover([&] {
    // Moves the clock until the wait returns: an hour-long deadline ends within a slice.
    while (!returned.load()) {
      std::this_thread::sleep_for(milliseconds(10));
      clock.advance(hours(2));
    }
  });
  auto ready = pollUntil(clock, pipe.read_end.get(), POLLIN, clock.monotonicNow() + hours(1));
  returned = true;
  mover.join();
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  EXPECT_EQ(*ready, 0);
}

TEST(PollUntil, ABadDescriptorIsReportedNotWaitedOn) {
  SystemClock clock;
  auto ready = pollUntil(clock, 12345, POLLIN, clock.monotonicNow() + hours(1));
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  EXPECT_EQ(*ready & POLLNVAL, POLLNVAL);
}

}  // namespace
}  // namespace relay
