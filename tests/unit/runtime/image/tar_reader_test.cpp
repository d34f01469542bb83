#include "runtime/image/tar_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/image_builder.h"

namespace relay::runtime::image {
namespace {

using relay::testing::TarBuilder;

struct Seen {
  TarEntry entry;
  std::string data;
  bool ended = false;
};

class Recorder final : public TarVisitor {
 public:
  Status entry(const TarEntry& entry) override {
    seen.push_back({entry, "", false});
    return {};
  }
  Status data(std::string_view bytes) override {
    seen.back().data.append(bytes);
    return {};
  }
  Status end() override {
    seen.back().ended = true;
    return {};
  }
  std::vector<Seen> seen;
};

TEST(TarReader, ReadsFilesDirectoriesAndLinksWithTheirModes) {
  const std::string archive = TarBuilder()
                                  .dir("etc", 0755)
                                  .file("etc/motd", "hello\n", 0640)
                                  .symlink("bin", "usr/bin")
                                  .hardlink("etc/motd2", "etc/motd")
                                  .finish();
  Recorder recorder;
  TarReader reader(recorder);
  ASSERT_TRUE(reader.feed(archive).ok());
  ASSERT_TRUE(reader.finish().ok());
  EXPECT_TRUE(reader.ended());
  ASSERT_EQ(recorder.seen.size(), 4u);
  EXPECT_EQ(recorder.seen[0].entry.type, TarEntry::Type::kDirectory);
  EXPECT_EQ(recorder.seen[1].entry.path, "etc/motd");
  EXPECT_EQ(recorder.seen[1].entry.mode, 0640u);
  EXPECT_EQ(recorder.seen[1].data, "hello\n");
  EXPECT_EQ(recorder.seen[2].entry.type, TarEntry::Type::kSymlink);
  EXPECT_EQ(recorder.seen[2].entry.link, "usr/bin");
  EXPECT_EQ(recorder.seen[3].entry.type, TarEntry::Type::kHardLink);
  for (const Seen& seen : recorder.seen) EXPECT_TRUE(seen.ended) << seen.entry.path;
}

TEST(TarReader, LongNamesComeFromPaxAndGnuHeaders) {
  const std::string long_name = "usr/lib/" + std::string(150, 'a') + "/module.py";
  TarBuilder pax;
  pax.file(long_name, "x");
  // GNU's form: an `L` member whose data is the next member's name.
  const std::string gnu_name = "opt/" + std::string(120, 'b');
  std::string gnu = TarBuilder::block("././@LongLink", 'L', gnu_name.size() + 1, 0644, "");
  gnu += gnu_name + '\0' + std::string(512 - (gnu_name.size() + 1) % 512, '\0');
  gnu += TarBuilder::block(gnu_name.substr(0, 100), '0', 0, 0644, "");
  Recorder recorder;
  TarReader reader(recorder);
  ASSERT_TRUE(reader.feed(pax.bytes()).ok());
  ASSERT_TRUE(reader.feed(gnu).ok());
  ASSERT_EQ(recorder.seen.size(), 2u);
  EXPECT_EQ(recorder.seen[0].entry.path, long_name);
  EXPECT_EQ(recorder.seen[0].data, "x");
  EXPECT_EQ(recorder.seen[1].entry.path, gnu_name);
}

TEST(TarReader, BytesSplitAnywhereGiveTheSameMembers) {
  const std::string content(3000, 'z');
  const std::string archive =
      TarBuilder().file("a", content).file(std::string(120, 'p'), "pax").finish();
  Recorder recorder;
  TarReader reader(recorder);
  for (const char c : archive) ASSERT_TRUE(reader.feed(std::string_view(&c, 1)).ok());
  ASSERT_EQ(recorder.seen.size(), 2u);
  EXPECT_EQ(recorder.seen[0].data, content);
  EXPECT_EQ(recorder.seen[1].entry.path, std::string(120, 'p'));
}

TEST(TarReader, AHeaderWithABadChecksumIsRefused) {
  std::string archive = TarBuilder().file("a", "x").finish();
  archive[0] = 'b';  // the name changes, the checksum does not
  Recorder recorder;
  TarReader reader(recorder);
  const Status status = reader.feed(archive);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("checksum"), std::string::npos);
  EXPECT_TRUE(recorder.seen.empty());
}

TEST(TarReader, AnArchiveCutInsideAMemberIsTruncated) {
  const std::string archive = TarBuilder().file("a", std::string(2000, 'x')).bytes();
  Recorder recorder;
  TarReader reader(recorder);
  ASSERT_TRUE(reader.feed(archive.substr(0, 1000)).ok());
  const Status status = reader.finish();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("truncated"), std::string::npos);
}

TEST(TarReader, AVisitorErrorStopsTheReader) {
  class Refusing final : public TarVisitor {
    Status entry(const TarEntry&) override { return Error::invalid("no thanks"); }
    Status data(std::string_view) override { return {}; }
    Status end() override { return {}; }
  } refusing;
  TarReader reader(refusing);
  const Status status = reader.feed(TarBuilder().file("a", "x").finish());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "no thanks");
  EXPECT_FALSE(reader.feed("more").ok());
}

}  // namespace
}  // namespace relay::runtime::image
