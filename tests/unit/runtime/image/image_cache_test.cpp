#include "runtime/image/image_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "fakes/temp_dir.h"
#include "support/image_builder.h"

namespace relay::runtime::image {
namespace {

namespace fs = std::filesystem;
using relay::testing::FakeClock;
using relay::testing::TarBuilder;
using relay::testing::TempDir;
using relay::testing::writeOciLayout;

class ImageCacheTest : public ::testing::Test {
 protected:
  /// An OCI layout of one layer holding `bytes` bytes of file data; its `oci:` reference.
  std::string image(const std::string& name, std::size_t bytes) {
    const fs::path layout = dir_.path() / "layouts" / name;
    digests_[name] = writeOciLayout(
        layout, {TarBuilder().file("data/" + name, std::string(bytes, 'x')).finish()});
    return "oci:" + layout.string();
  }
  std::unique_ptr<ImageCache> cache(std::uint64_t max_bytes = 64 << 20) {
    ImageCacheSettings settings;
    settings.dir = dir_.path() / "cache";
    settings.max_bytes = max_bytes;
    settings.resolve_ttl = std::chrono::seconds(10);
    auto made = ImageCache::create(settings, clock_, nullptr);
    EXPECT_TRUE(made.ok());
    return made.ok() ? std::move(made).value() : nullptr;
  }
  std::vector<std::string> cached(const ImageCache& images) const {
    std::vector<std::string> digests;
    for (const CachedImage& entry : images.entries()) digests.push_back(entry.digest);
    return digests;
  }

  TempDir dir_;
  FakeClock clock_;
  std::map<std::string, std::string> digests_;
};

TEST_F(ImageCacheTest, UnpacksAnImageOnceAndSharesItsRoot) {
  const std::string reference = image("a", 1000);
  auto images = cache();
  auto first = images->acquire(reference);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ((*first)->digest(), digests_["a"]);
  EXPECT_TRUE(fs::exists((*first)->rootfs() / "data/a"));
  // Two names of the same image, one entry; a second cache (another Relay) finds it too.
  auto again = cache()->acquire(reference);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->rootfs(), (*first)->rootfs());
  EXPECT_EQ(cached(*images), std::vector<std::string>{digests_["a"]});
  // Readable by the sandbox user on the way down.
  EXPECT_EQ(fs::status(images->settings().dir).permissions() & fs::perms::others_exec,
            fs::perms::others_exec);
}

TEST_F(ImageCacheTest, EvictsTheLeastRecentlyUsedImageToMakeRoom) {
  const std::string a = image("a", 300'000), b = image("b", 300'000), c = image("c", 300'000);
  auto images = cache(800'000);
  ASSERT_TRUE(images->acquire(a).ok());
  clock_.advance(std::chrono::seconds(11));  // the names' TTL passes: nothing holds them
  ::usleep(20'000);                          // the lock files' times differ
  ASSERT_TRUE(images->acquire(b).ok());
  clock_.advance(std::chrono::seconds(11));
  ::usleep(20'000);
  ASSERT_TRUE(images->acquire(c).ok());
  EXPECT_EQ(cached(*images), (std::vector<std::string>{digests_["b"], digests_["c"]}));
}

TEST_F(ImageCacheTest, NeverEvictsAnImageInUse) {
  const std::string a = image("a", 300'000), b = image("b", 300'000), c = image("c", 300'000);
  auto images = cache(800'000);
  auto held = images->acquire(a);  // a sandbox runs on it
  ASSERT_TRUE(held.ok());
  clock_.advance(std::chrono::seconds(11));
  ASSERT_TRUE(images->acquire(b).ok());
  clock_.advance(std::chrono::seconds(11));
  ASSERT_TRUE(images->acquire(c).ok());
  // b went instead of a, which is older but held.
  EXPECT_EQ(cached(*images), (std::vector<std::string>{digests_["a"], digests_["c"]}));
  EXPECT_TRUE(fs::exists((*held)->rootfs() / "data/a"));
}

TEST_F(ImageCacheTest, WithEverythingInUseANewImageIsUnavailable) {
  const std::string a = image("a", 500'000), b = image("b", 500'000);
  auto images = cache(800'000);
  auto held = images->acquire(a);
  ASSERT_TRUE(held.ok());
  clock_.advance(std::chrono::seconds(11));
  auto refused = images->acquire(b);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(refused.error().message.find("no room"), std::string::npos) << refused.error().message;
  EXPECT_EQ(cached(*images), std::vector<std::string>{digests_["a"]});
}

TEST_F(ImageCacheTest, AnImageLargerThanTheCacheIsUnavailableAndLeavesNothing) {
  const std::string big = image("big", 2'000'000);
  auto images = cache(1'000'000);
  auto refused = images->acquire(big);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(refused.error().message.find("limit"), std::string::npos) << refused.error().message;
  EXPECT_TRUE(fs::is_empty(images->settings().dir));
}

TEST_F(ImageCacheTest, AMissingLayoutOrATamperedLayerIsUnavailable) {
  auto images = cache();
  auto missing = images->acquire("oci:" + (dir_.path() / "nowhere").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kUnavailable);
  const std::string reference = image("t", 100);
  for (const auto& entry : fs::directory_iterator(dir_.path() / "layouts/t/blobs/sha256")) {
    if (fs::file_size(entry.path()) > 1000) {
      std::ofstream(entry.path(), std::ios::binary) << TarBuilder().file("data/t", "evil").finish();
    }
  }
  auto tampered = images->acquire(reference);
  ASSERT_FALSE(tampered.ok());
  EXPECT_EQ(tampered.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(tampered.error().message.find("digest"), std::string::npos);
  EXPECT_TRUE(images->entries().empty());
}

TEST_F(ImageCacheTest, ARetaggedNameIsResolvedAgainOnceItsTtlPassed) {
  const fs::path layout = dir_.path() / "layouts/r";
  const std::string first = writeOciLayout(layout, {TarBuilder().file("v", "1").finish()});
  auto images = cache();
  const std::string reference = "oci:" + layout.string() + ":latest";
  ASSERT_EQ((*images->acquire(reference))->digest(), first);
  const std::string second = writeOciLayout(layout, {TarBuilder().file("v", "2").finish()});
  EXPECT_EQ((*images->acquire(reference))->digest(), first) << "within the TTL";
  clock_.advance(std::chrono::seconds(11));
  EXPECT_EQ((*images->acquire(reference))->digest(), second);
}

TEST_F(ImageCacheTest, WhatACrashedUnpackLeftIsRemovedAtCreate) {
  const fs::path dir = dir_.path() / "cache";
  fs::create_directories(dir / ".staging-999999999-1/rootfs");
  fs::create_directories(dir / (".staging-" + std::to_string(::getppid()) + "-1"));
  auto images = cache();
  EXPECT_FALSE(fs::exists(dir / ".staging-999999999-1"));
  EXPECT_TRUE(fs::exists(dir / (".staging-" + std::to_string(::getppid()) + "-1")))
      << "a live process's unpack is its own";
}

TEST(ImageReference, NamesTheDaemonOrAnOciLayout) {
  EXPECT_EQ(parseImageReference("python:3.12-slim")->kind, ImageReference::Kind::kDaemon);
  const auto oci = parseImageReference("oci:/srv/images/py:3.11");
  ASSERT_TRUE(oci.ok());
  EXPECT_EQ(oci->kind, ImageReference::Kind::kOciLayout);
  EXPECT_EQ(oci->name, "/srv/images/py");
  EXPECT_EQ(oci->ref, "3.11");
  EXPECT_FALSE(parseImageReference("oci:relative/dir").ok());
}

}  // namespace
}  // namespace relay::runtime::image
