#include "runtime/image/layer_extractor.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fakes/temp_dir.h"
#include "support/image_builder.h"

namespace relay::runtime::image {
namespace {

namespace fs = std::filesystem;
using relay::testing::TarBuilder;
using relay::testing::TempDir;

class LayerExtractorTest : public ::testing::Test {
 protected:
  LayerExtractorTest() { fs::create_directories(root()); }

  fs::path root() const { return dir_.path() / "rootfs"; }
  /// Applies the layers in order; the first failure.
  Status apply(const std::vector<std::string>& layers, std::uint64_t max_bytes = 1 << 30) {
    LayerExtractor extractor(UniqueFd(::open(root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)),
                             max_bytes);
    for (const std::string& layer : layers) {
      extractor.beginLayer();
      TarReader reader(extractor);
      if (auto status = reader.feed(layer); !status) return status;
      if (auto status = reader.finish(); !status) return status;
      if (auto status = extractor.endLayer(); !status) return status;
    }
    return {};
  }
  std::string read(const std::string& relative) const { return dir_.read("rootfs/" + relative); }
  bool exists(const fs::path& path) const {
    std::error_code ec;
    return fs::exists(fs::symlink_status(path, ec));
  }

  TempDir dir_;
};

TEST_F(LayerExtractorTest, BuildsTheTreeWithModesLinksAndMissingParents) {
  ASSERT_TRUE(apply({TarBuilder()
                         .file("usr/bin/tool", "#!/bin/sh\n", 0755)
                         .dir("etc", 0750)
                         .file("etc/conf", "a=1\n", 0600)
                         .symlink("bin", "usr/bin")
                         .hardlink("usr/bin/tool2", "usr/bin/tool")
                         .finish()})
                  .ok());
  EXPECT_EQ(read("usr/bin/tool"), "#!/bin/sh\n");
  EXPECT_EQ(fs::status(root() / "usr/bin/tool").permissions(), fs::perms(0755));
  EXPECT_EQ(fs::status(root() / "etc").permissions(), fs::perms(0750));
  EXPECT_EQ(fs::read_symlink(root() / "bin"), "usr/bin");
  EXPECT_EQ(fs::hard_link_count(root() / "usr/bin/tool"), 2u);
  EXPECT_EQ(read("bin/tool2"), "#!/bin/sh\n");
}

TEST_F(LayerExtractorTest, WhiteoutsRemoveWhatLowerLayersMade) {
  ASSERT_TRUE(apply({TarBuilder().file("a/keep", "1").file("a/gone", "2").file("b/x", "3").finish(),
                     TarBuilder().file("a/.wh.gone", "").file(".wh.b", "").finish()})
                  .ok());
  EXPECT_EQ(read("a/keep"), "1");
  EXPECT_FALSE(exists(root() / "a/gone"));
  EXPECT_FALSE(exists(root() / "a/.wh.gone"));
  EXPECT_FALSE(exists(root() / "b"));
}

TEST_F(LayerExtractorTest, AnOpaqueDirectoryHidesLowerContentsNotItsOwnLayers) {
  ASSERT_TRUE(apply({TarBuilder().file("d/old", "1").file("d/sub/old", "2").finish(),
                     // The layer's own member may come before the marker.
                     TarBuilder().file("d/new", "3").file("d/.wh..wh..opq", "").finish()})
                  .ok());
  EXPECT_EQ(read("d/new"), "3");
  EXPECT_FALSE(exists(root() / "d/old"));
  EXPECT_FALSE(exists(root() / "d/sub"));
}

TEST_F(LayerExtractorTest, ALaterLayerReplacesAFileByADirectoryAndBack) {
  ASSERT_TRUE(apply({TarBuilder().file("x", "file").dir("y").file("y/in", "1").finish(),
                     TarBuilder().dir("x").file("x/in", "2").file("y", "now a file").finish()})
                  .ok());
  EXPECT_EQ(read("x/in"), "2");
  EXPECT_EQ(read("y"), "now a file");
}

TEST_F(LayerExtractorTest, ADotDotMemberIsRefused) {
  const Status status = apply({TarBuilder().file("a/../../outside", "x").finish()});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find(".."), std::string::npos);
  EXPECT_FALSE(exists(dir_.path() / "outside"));
}

TEST_F(LayerExtractorTest, SymlinksCannotLeadAMemberOutOfTheRoot) {
  const fs::path outside = dir_.path() / "outside";
  fs::create_directories(outside);
  // An absolute symlink and a relative one climbing past the root, then members through them.
  ASSERT_TRUE(apply({TarBuilder()
                         .dir(outside.relative_path().string())
                         .symlink("abs", outside.string())
                         .symlink("rel", "../../../../..")
                         .finish(),
                     TarBuilder().file("abs/pwned", "1").file("rel/tmp/pwned", "2").finish()})
                  .ok());
  EXPECT_FALSE(exists(outside / "pwned"));
  EXPECT_FALSE(exists(fs::path("/tmp/pwned")));
  // Both resolved inside the root, as the image itself would see them.
  EXPECT_EQ(read(outside.relative_path().string() + "/pwned"), "1");
  EXPECT_EQ(read("tmp/pwned"), "2");
}

TEST_F(LayerExtractorTest, AHardLinkCannotNameAHostFile) {
  dir_.write("secret", "host secret");
  const fs::path secret = dir_.path() / "secret";
  const Status status = apply({TarBuilder()
                                   .symlink("host", dir_.path().string())
                                   .hardlink("stolen", "host/secret")
                                   .finish()});
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(exists(root() / "stolen"));
  EXPECT_EQ(fs::hard_link_count(secret), 1u);
}

TEST_F(LayerExtractorTest, SetUserIdBitsAreDropped) {
  ASSERT_TRUE(apply({TarBuilder().file("su", "x", 04755).file("sg", "y", 02755).finish()}).ok());
  EXPECT_EQ(fs::status(root() / "su").permissions(), fs::perms(0755));
  EXPECT_EQ(fs::status(root() / "sg").permissions(), fs::perms(0755));
}

TEST_F(LayerExtractorTest, FilesBeyondTheLimitFail) {
  const Status status = apply({TarBuilder().file("big", std::string(4096, 'x')).finish()}, 1000);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("limit"), std::string::npos);
}

TEST_F(LayerExtractorTest, EnsureRegularFileReplacesASymlinkAndKeepsAFile) {
  ASSERT_TRUE(apply({TarBuilder()
                         .symlink("etc/resolv.conf", "/run/systemd/resolve/stub-resolv.conf")
                         .file("etc/hosts", "127.0.0.1 localhost\n")
                         .finish()})
                  .ok());
  LayerExtractor extractor(UniqueFd(::open(root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)),
                           1 << 20);
  ASSERT_TRUE(extractor.ensureRegularFile("etc/resolv.conf").ok());
  ASSERT_TRUE(extractor.ensureRegularFile("etc/hosts").ok());
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(root() / "etc/resolv.conf")));
  EXPECT_EQ(read("etc/hosts"), "127.0.0.1 localhost\n");
}

TEST(CleanMemberPath, DropsLeadingAndDotPartsAndRefusesDotDot) {
  EXPECT_EQ(*cleanMemberPath("./usr//bin/./x"), "usr/bin/x");
  EXPECT_EQ(*cleanMemberPath("/etc/passwd"), "etc/passwd");
  EXPECT_EQ(*cleanMemberPath("./"), "");
  EXPECT_FALSE(cleanMemberPath("a/../b").ok());
}

}  // namespace
}  // namespace relay::runtime::image
