#include "common/size.h"

#include <gtest/gtest.h>

namespace relay {
namespace {

TEST(Size, ParsesBytesAndBinaryUnits) {
  EXPECT_EQ(parseSize("262144").value(), 262144u);
  EXPECT_EQ(parseSize("10B").value(), 10u);
  EXPECT_EQ(parseSize("256KiB").value(), 256u * 1024);
  EXPECT_EQ(parseSize("16MiB").value(), 16u << 20);
  EXPECT_EQ(parseSize("2GiB").value(), 2ULL << 30);
}

TEST(Size, RejectsMalformedInput) {
  for (const char* bad : {"", "KiB", "-1", "1.5MiB", "256kb", "256 KiB", "1TiB", "1MB",
                          "99999999999999999999", "17179869184GiB"}) {
    const auto parsed = parseSize(bad);
    ASSERT_FALSE(parsed.ok()) << "accepted \"" << bad << "\"";
    EXPECT_NE(parsed.error().message.find("KiB"), std::string::npos);
  }
}

TEST(Size, FormatsWithTheLargestExactUnit) {
  EXPECT_EQ(formatSize(256 * 1024), "256KiB");
  EXPECT_EQ(formatSize(1000), "1000B");
  EXPECT_EQ(formatSize(16u << 20), "16MiB");
  EXPECT_EQ(formatSize(0), "0B");
}

}  // namespace
}  // namespace relay
