#include "runtime/image/image_layers.h"

#include <fcntl.h>

#include <gtest/gtest.h>

#include <fstream>

#include "fakes/temp_dir.h"
#include "runtime/image/sha256.h"
#include "support/image_builder.h"

namespace relay::runtime::image {
namespace {

namespace fs = std::filesystem;
using relay::testing::TarBuilder;
using relay::testing::TempDir;
using relay::testing::writeOciLayout;

class ImageLayersTest : public ::testing::Test {
 protected:
  fs::path layout() const { return dir_.path() / "layout"; }
  /// Reads the layout and applies it to a fresh root; the root's path.
  Result<fs::path> unpack(std::string_view ref = "") {
    auto image = readOciLayout(layout(), ref);
    if (!image) return image.error();
    const fs::path root = dir_.path() / ("root" + std::to_string(++roots_));
    fs::create_directories(root);
    LayerExtractor extractor(UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)),
                             1 << 30);
    if (auto status = applyLayers(*image, extractor); !status) return status.error();
    return root;
  }
  /// The file of the layout's blob `digest`.
  fs::path blob(const std::string& digest) const {
    return layout() / "blobs/sha256" / digest.substr(7);
  }

  TempDir dir_;
  int roots_ = 0;
};

TEST_F(ImageLayersTest, AnOciLayoutWithGzipLayersUnpacksInOrder) {
  const std::string digest = writeOciLayout(
      layout(),
      {TarBuilder().file("etc/os-release", "ID=test\n").file("usr/bin/old", "1").finish(),
       TarBuilder().file("usr/bin/.wh.old", "").file("usr/bin/new", "2").finish()},
      /*gzip=*/true);
  EXPECT_EQ(*ociLayoutDigest(layout(), ""), digest);
  auto root = unpack();
  ASSERT_TRUE(root.ok()) << root.error().message;
  EXPECT_TRUE(fs::exists(*root / "etc/os-release"));
  EXPECT_FALSE(fs::exists(*root / "usr/bin/old"));
  EXPECT_TRUE(fs::exists(*root / "usr/bin/new"));
}

TEST_F(ImageLayersTest, ALayerWhoseBytesDifferFromItsDigestIsRefused) {
  const std::string layer = TarBuilder().file("bin/sh", "genuine").finish();
  writeOciLayout(layout(), {layer});
  // Same size, other bytes, under the genuine digest's name.
  std::string forged = TarBuilder().file("bin/sh", "forgery").finish();
  std::ofstream(blob(sha256Digest(layer)), std::ios::binary) << forged;
  auto root = unpack();
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.error().message.find("expected " + sha256Digest(layer)), std::string::npos)
      << root.error().message;
}

TEST_F(ImageLayersTest, AManifestThatDoesNotMatchItsDigestIsRefused) {
  writeOciLayout(layout(), {TarBuilder().file("a", "1").finish()});
  for (const auto& entry : fs::directory_iterator(layout() / "blobs/sha256")) {
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), {});
    if (text.find("\"layers\"") == std::string::npos) continue;
    text.insert(text.size() - 1, " ");  // still JSON, other digest
    std::ofstream(entry.path()) << text;
  }
  auto digest = ociLayoutDigest(layout(), "");
  ASSERT_FALSE(digest.ok());
  EXPECT_NE(digest.error().message.find("image manifest"), std::string::npos);
}

TEST_F(ImageLayersTest, AnIndexOfSeveralManifestsNeedsTheRef) {
  const std::string one =
      writeOciLayout(layout(), {TarBuilder().file("a", "1").finish()}, false, "one");
  const std::string two =
      writeOciLayout(layout(), {TarBuilder().file("a", "2").finish()}, false, "two");
  auto unnamed = ociLayoutDigest(layout(), "");
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.error().message.find("oci:DIR:REF"), std::string::npos);
  EXPECT_EQ(*ociLayoutDigest(layout(), "one"), one);
  EXPECT_EQ(*ociLayoutDigest(layout(), "two"), two);
  EXPECT_FALSE(ociLayoutDigest(layout(), "three").ok());
}

TEST_F(ImageLayersTest, ADockerArchiveConfigMustHashToTheImageId) {
  const std::string layer = TarBuilder().file("hello", "world").finish();
  const fs::path archive = dir_.path() / "export";
  fs::create_directories(archive / "abc");
  std::ofstream(archive / "abc/layer.tar", std::ios::binary) << layer;
  const std::string config =
      R"({"rootfs":{"type":"layers","diff_ids":[")" + sha256Digest(layer) + R"("]}})";
  const std::string id = sha256Digest(config);
  std::ofstream(archive / (id.substr(7) + ".json")) << config;
  std::ofstream(archive / "manifest.json")
      << R"([{"Config":")" + id.substr(7) + R"(.json","Layers":["abc/layer.tar"]}])";
  auto image = readDockerArchive(archive, id);
  ASSERT_TRUE(image.ok()) << image.error().message;
  ASSERT_EQ(image->layers.size(), 1u);
  EXPECT_EQ(image->layers[0].diff_id, sha256Digest(layer));
  auto other = readDockerArchive(archive, sha256Digest("another config"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("expected"), std::string::npos);
}

TEST_F(ImageLayersTest, AManifestPathCannotLeaveTheExport) {
  const fs::path archive = dir_.path() / "export";
  fs::create_directories(archive);
  std::ofstream(archive / "manifest.json") << R"([{"Config":"../../etc/passwd","Layers":[]}])";
  auto image = readDockerArchive(archive, sha256Digest("x"));
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message.find(".."), std::string::npos);
}

}  // namespace
}  // namespace relay::runtime::image
