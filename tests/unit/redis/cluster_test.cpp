#include "redis/cluster.h"

#include <gtest/gtest.h>

namespace relay::redis {
namespace {

TEST(KeySlot, MatchesRedisClusterKeyslot) {
  // Values from CLUSTER KEYSLOT on a real cluster.
  EXPECT_EQ(keySlot("foo"), 12182);
  EXPECT_EQ(keySlot("123456789"), 12739);
  EXPECT_EQ(keySlot(""), 0);
}

TEST(KeySlot, EveryRelayKeyOfAHashTaggedStreamSharesItsSlot) {
  const std::uint16_t stream = keySlot("{events}");
  EXPECT_EQ(stream, keySlot("events"));
  for (const char* key :
       {"relay:{events}:dlq", "relay:{events}:stats", "relay:{events}:inv:relay:1-0",
        "relay:{events}:occ:a:b:2026-01-01T00:00:00Z", "relay:{events}:inv:{g}:1-0"}) {
    EXPECT_EQ(keySlot(key), stream) << key;
  }
  EXPECT_NE(keySlot("relay:events:dlq"), keySlot("events"));
}

TEST(HasHashTag, NeedsANonEmptyTagBetweenBraces) {
  EXPECT_TRUE(hasHashTag("{events}"));
  EXPECT_TRUE(hasHashTag("prod-{events}"));
  EXPECT_TRUE(hasHashTag("a}{b}"));
  EXPECT_FALSE(hasHashTag("events"));
  EXPECT_FALSE(hasHashTag("{}events"));
  EXPECT_FALSE(hasHashTag("{events"));
  EXPECT_FALSE(hasHashTag("events}"));
}

TEST(ParseRedirect, ReadsMovedAndAsk) {
  const Address current{"10.0.0.9", 7000, ""};
  const auto moved = parseRedirect(errorFromReply("MOVED 3999 127.0.0.1:6381"), current);
  ASSERT_TRUE(moved.has_value());
  EXPECT_FALSE(moved->ask);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->target, (Address{"127.0.0.1", 6381, ""}));
  const auto ask = parseRedirect(errorFromReply("ASK 12 :7002"), current);
  ASSERT_TRUE(ask.has_value());
  EXPECT_TRUE(ask->ask);
  EXPECT_EQ(ask->target, (Address{"10.0.0.9", 7002, ""}));  // empty host: the current one
  const auto v6 = parseRedirect(errorFromReply("MOVED 1 [::1]:7003"), current);
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->target.host, "::1");
}

TEST(ParseRedirect, IgnoresEverythingElse) {
  const Address current{"h", 1, ""};
  EXPECT_FALSE(parseRedirect(errorFromReply("ERR MOVED 1 h:2"), current));
  EXPECT_FALSE(parseRedirect(errorFromReply("MOVED garbage"), current));
  EXPECT_FALSE(parseRedirect(errorFromReply("MOVED 1 nohostport"), current));
  // A slot or port that is not a whole number is not a redirect to follow.
  EXPECT_FALSE(parseRedirect(errorFromReply("MOVED 12x h:2"), current));
  EXPECT_FALSE(parseRedirect(errorFromReply("MOVED 1 h:2x"), current));
  EXPECT_FALSE(parseRedirect(errorFromReply("MOVED 1 h:"), current));
  EXPECT_FALSE(parseRedirect(Error{ErrorKind::kIo, "MOVED 1 h:2"}, current));
}

}  // namespace
}  // namespace relay::redis
