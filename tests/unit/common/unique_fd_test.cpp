#include "common/unique_fd.h"

#include <fcntl.h>

#include <utility>

#include <gtest/gtest.h>

namespace relay {
namespace {

bool isOpen(int fd) { return ::fcntl(fd, F_GETFD) >= 0; }

int openDevNull() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFd, ClosesWhatItOwnsOnDestruction) {
  int raw = -1;
  {
    const UniqueFd fd(openDevNull());
    raw = fd.get();
    ASSERT_TRUE(fd.valid());
    EXPECT_TRUE(isOpen(raw));
  }
  EXPECT_FALSE(isOpen(raw));
}

TEST(UniqueFd, MovingTransfersOwnershipAndLeavesTheSourceEmpty) {
  UniqueFd first(openDevNull());
  const int raw = first.get();
  UniqueFd second(std::move(first));
  EXPECT_FALSE(first.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is -1
  EXPECT_EQ(second.get(), raw);
  UniqueFd third;
  third = std::move(second);
  EXPECT_EQ(third.get(), raw);
  EXPECT_TRUE(isOpen(raw));
}

TEST(UniqueFd, MoveAssignmentClosesThePreviousDescriptor) {
  UniqueFd target(openDevNull());
  const int previous = target.get();
  UniqueFd source(openDevNull());
  target = std::move(source);
  EXPECT_FALSE(isOpen(previous));
  EXPECT_TRUE(target.valid());
}

TEST(UniqueFd, ReleaseGivesUpOwnershipWithoutClosing) {
  UniqueFd fd(openDevNull());
  const int raw = fd.release();
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(isOpen(raw));
  ::close(raw);
}

TEST(UniqueFd, ResetClosesAndAdoptsTheNewDescriptor) {
  UniqueFd fd(openDevNull());
  const int old = fd.get();
  const int adopted = openDevNull();
  fd.reset(adopted);
  EXPECT_FALSE(isOpen(old));
  EXPECT_EQ(fd.get(), adopted);
  fd.reset();
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(isOpen(adopted));
}

}  // namespace
}  // namespace relay
