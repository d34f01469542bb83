#include "runtime/child_setup.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace relay::runtime::child_setup {
namespace {

bool cloexec(int fd) { return (::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0; }

class MarkCloexec : public ::testing::TestWithParam<CloexecMethod> {};

TEST_P(MarkCloexec, MarksEveryDescriptorFromFirstAndLeavesTheLowerOnes) {
  std::array<int, 2> low{}, high{};
  ASSERT_EQ(::pipe(low.data()), 0);
  ASSERT_EQ(::pipe(high.data()), 0);
  ASSERT_GT(high[0], low[1]);
  ASSERT_TRUE(markCloexecFrom(high[0], GetParam())) << std::strerror(errno);
  EXPECT_FALSE(cloexec(low[0]));
  EXPECT_FALSE(cloexec(low[1]));
  EXPECT_TRUE(cloexec(high[0]));
  EXPECT_TRUE(cloexec(high[1]));
  for (int fd : {low[0], low[1], high[0], high[1]}) ::close(fd);
}

INSTANTIATE_TEST_SUITE_P(EveryMethod, MarkCloexec,
                         ::testing::Values(CloexecMethod::kCloseRange, CloexecMethod::kProcSelfFd,
                                           CloexecMethod::kRlimitScan));

TEST(ChildSetup, BestMethodMarksInheritableDescriptors) {
  std::array<int, 2> fds{};
  ASSERT_EQ(::pipe(fds.data()), 0);
  ASSERT_TRUE(markCloexecFrom(fds[0]));
  EXPECT_TRUE(cloexec(fds[0]));
  EXPECT_TRUE(cloexec(fds[1]));
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(ChildSetup, FreshSessionKeyringReplacesTheInheritedOne) {
  ASSERT_GE(::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "relay-inherited"), 0);
  const auto sessionName = [] {
    std::array<char, 256> description{};
    const long size = ::syscall(SYS_keyctl, KEYCTL_DESCRIBE, KEY_SPEC_SESSION_KEYRING,
                                description.data(), description.size());
    // `type;uid;gid;perm;name`
    const std::string text = size > 0 ? std::string(description.data()) : std::string();
    return text.substr(text.rfind(';') + 1);
  };
  ASSERT_EQ(sessionName(), "relay-inherited");
  ASSERT_TRUE(joinFreshSessionKeyring()) << std::strerror(errno);
  EXPECT_EQ(sessionName(), "_ses");
}

TEST(ChildSetup, InstallFdsPlacesEachSourceEvenWhenSourcesSitOnTargets) {
  // Run in a child: it rearranges descriptors 0..3 of the process.
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::array<int, 2> a{}, b{};
    if (::pipe(a.data()) != 0 || ::pipe2(b.data(), O_CLOEXEC) != 0) ::_exit(10);
    ::dup2(a[0], 3);  // a source already on a later target...
    ::dup2(b[1], 0);  // ...and one on an earlier target
    const int sources[4] = {3, 0, 2, 1};
    int scratch[4];
    struct stat before[4];
    for (int i = 0; i < 4; ++i) ::fstat(sources[i], &before[i]);
    if (!installFds(sources, scratch, 4)) ::_exit(11);
    for (int i = 0; i < 4; ++i) {
      struct stat after {};
      if (::fstat(i, &after) != 0 || after.st_ino != before[i].st_ino) ::_exit(20 + i);
      if (cloexec(i)) ::_exit(30 + i);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace relay::runtime::child_setup
