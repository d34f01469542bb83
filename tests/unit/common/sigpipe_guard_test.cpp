#include "common/sigpipe_guard.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace relay {
namespace {

bool sigpipeBlocked() {
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  return sigismember(&mask, SIGPIPE) == 1;
}

bool sigpipePending() {
  sigset_t pending;
  sigpending(&pending);
  return sigismember(&pending, SIGPIPE) == 1;
}

TEST(SigpipeGuard, WriteToAClosedPeerFailsWithEpipeInsteadOfKillingTheProcess) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ::close(fds[1]);
  ssize_t written = 0;
  int saved_errno = 0;
  {
    SigpipeGuard guard;
    EXPECT_TRUE(sigpipeBlocked());
    written = ::write(fds[0], "x", 1);
    saved_errno = errno;
  }
  ::close(fds[0]);
  EXPECT_EQ(written, -1);
  EXPECT_EQ(saved_errno, EPIPE);
  // The raised SIGPIPE was consumed and the old mask restored.
  EXPECT_FALSE(sigpipePending());
  EXPECT_FALSE(sigpipeBlocked());
}

TEST(SigpipeGuard, PreservesErrnoOfTheGuardedCall) {
  errno = 0;
  {
    SigpipeGuard guard;
    errno = ECONNRESET;
  }
  EXPECT_EQ(errno, ECONNRESET);
}

TEST(SigpipeGuard, LeavesAnAlreadyBlockedMaskAlone) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  sigset_t old;
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
  { SigpipeGuard guard; }
  EXPECT_TRUE(sigpipeBlocked());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace
}  // namespace relay
