#include "runtime/sandbox/sandbox_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A stand-in for /dev/net/tun with the given mode, owned by whoever runs the test: the check
// reads only the mode bits and owner, which a regular file has as a device node does.
class TunAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("relay-tun-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(path()).put('\n');
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / "tun").string(); }
  void chmodTo(mode_t mode) { ASSERT_EQ(::chmod(path().c_str(), mode), 0); }

  // A user that neither owns the file nor has its group.
  const uid_t other_uid_ = ::getuid() + 1;
  const gid_t other_gid_ = ::getgid() + 1;

 private:
  fs::path dir_;
};

TEST_F(TunAccess, OpenToEveryoneIsNoProblem) {
  chmodTo(0666);
  EXPECT_THAT(tunAccessProblem(path(), other_uid_, other_gid_), IsEmpty());
}

TEST_F(TunAccess, RootOnlyDeviceIsNamedWithItsModeAndTheFix) {
  // As a host may ship it (seen on a VM image: crw------- root root): pasta then fails with
  // "Failed to open tun socket in namespace" and nothing more.
  chmodTo(0600);
  const std::string problem = tunAccessProblem(path(), other_uid_, other_gid_);
  EXPECT_THAT(problem, HasSubstr(path() + " is mode 0600"));
  EXPECT_THAT(problem, HasSubstr("uid " + std::to_string(other_uid_)));
  EXPECT_THAT(problem, HasSubstr("chmod 0666 " + path()));
}

TEST_F(TunAccess, ReadableButNotWritableIsAProblem) {
  chmodTo(0644);
  EXPECT_THAT(tunAccessProblem(path(), other_uid_, other_gid_), HasSubstr("is mode 0644"));
}

TEST_F(TunAccess, TheOwnerAndTheGroupAreJudgedByTheirOwnBits) {
  chmodTo(0660);
  EXPECT_THAT(tunAccessProblem(path(), ::getuid(), other_gid_), IsEmpty());
  EXPECT_THAT(tunAccessProblem(path(), other_uid_, ::getgid()), IsEmpty());
  EXPECT_THAT(tunAccessProblem(path(), other_uid_, other_gid_), HasSubstr("is mode 0660"));
}

TEST_F(TunAccess, AMissingDeviceSaysHowToMakeIt) {
  const std::string missing = path() + "-missing";
  const std::string problem = tunAccessProblem(missing, other_uid_, other_gid_);
  EXPECT_THAT(problem, HasSubstr(missing + " cannot be opened"));
  EXPECT_THAT(problem, HasSubstr("mknod " + missing + " c 10 200"));
}

// The kernel's rule without ACLs, which the app-directory check uses too: one class decides,
// the first that applies, even when a later class has more.
TEST(ModeGrants, OneClassDecidesTheOwnersThenTheGroupsThenTheOthers) {
  struct stat info {};
  info.st_uid = 1000;
  info.st_gid = 2000;
  info.st_mode = S_IFDIR | 0075;  // the owner nothing, the group everything, others r-x
  EXPECT_FALSE(modeGrants(info, 1000, 2000, 4));
  EXPECT_TRUE(modeGrants(info, 65534, 2000, 4 | 2 | 1));
  EXPECT_TRUE(modeGrants(info, 65534, 65534, 4 | 1));
  EXPECT_FALSE(modeGrants(info, 65534, 65534, 2));
  info.st_mode = S_IFDIR | 0705;  // the group nothing: a member is refused what others get
  EXPECT_FALSE(modeGrants(info, 65534, 2000, 1));
  EXPECT_TRUE(modeGrants(info, 65534, 65534, 1));
}

}  // namespace
}  // namespace relay::runtime
