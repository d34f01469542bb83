#include "redis/script.h"

#include <gtest/gtest.h>

#include <string>

#include "redis/sha1.h"

namespace relay::redis {
namespace {

TEST(Sha1Hex, MatchesFipsTestVectors) {
  EXPECT_EQ(sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1Hex(std::string(1'000'000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1Hex, HandlesEveryPaddingBoundary) {
  // 55 bytes fit one padded block, 56 need a second; 64 is a full block plus padding.
  EXPECT_EQ(sha1Hex(std::string(55, 'a')), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
  EXPECT_EQ(sha1Hex(std::string(56, 'a')), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
  EXPECT_EQ(sha1Hex(std::string(64, 'a')), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
}

TEST(Script, KnowsItsSha1) {
  const Script script("return 1");
  EXPECT_EQ(script.source(), "return 1");
  // What `redis-cli SCRIPT LOAD "return 1"` answers.
  EXPECT_EQ(script.sha1(), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}

}  // namespace
}  // namespace relay::redis
