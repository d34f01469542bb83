#include "runtime/child_setup.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <sys/syscall.h>
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

TEST(ChildSetup, MoveFdOntoItselfClearsCloseOnExec) {
  std::array<int, 2> fds{};
  ASSERT_EQ(::pipe2(fds.data(), O_CLOEXEC), 0);
  ASSERT_TRUE(moveFd(fds[0], fds[0]));
  EXPECT_FALSE(cloexec(fds[0]));
  const int target = fds[1] + 10;
  ASSERT_TRUE(moveFd(fds[1], target));
  EXPECT_FALSE(cloexec(target));
  for (int fd : {fds[0], fds[1], target}) ::close(fd);
}

}  // namespace
}  // namespace relay::runtime::child_setup
