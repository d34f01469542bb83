// REDIS_STREAM_RETENTION / REDIS_DLQ_RETENTION decisions (docs/operations.md "Retention"): what may
// be trimmed, from group positions and the age cut-off alone.
#include "stream/retention.h"

#include <gtest/gtest.h>

namespace relay::stream {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

constexpr std::uint64_t kNowMs = 1'790'000'000'000;
const WallTime kNow{milliseconds(kNowMs)};
constexpr std::uint64_t kDayMs = 86'400'000;

StreamId id(std::uint64_t ms, std::uint64_t seq = 0) { return {ms, seq}; }

// A group that read everything up to `last` and acknowledged all of it.
GroupPosition caughtUp(std::string name, StreamId last) { return {std::move(name), last, {}}; }

TEST(StreamTrimId, ZeroRetentionNeverTrims) {
  EXPECT_FALSE(streamTrimId({caughtUp("relay", id(kNowMs))}, kNow, milliseconds(0)));
}

TEST(StreamTrimId, NoGroupMeansNothingWasReadSoNothingIsTrimmed) {
  EXPECT_FALSE(streamTrimId({}, kNow, hours(24)));
}

TEST(StreamTrimId, CaughtUpGroupTrimsExactlyWhatIsOlderThanTheRetention) {
  const auto trim = streamTrimId({caughtUp("relay", id(kNowMs - 1))}, kNow, hours(24));
  ASSERT_TRUE(trim);
  EXPECT_EQ(*trim, id(kNowMs - kDayMs));
}

TEST(StreamTrimId, UnreadEntriesAreNeverTrimmedEvenWhenOld) {
  // The group read up to 3 days ago; everything after is unread, however old.
  const StreamId last = id(kNowMs - 3 * kDayMs, 7);
  const auto trim = streamTrimId({caughtUp("relay", last)}, kNow, hours(24));
  ASSERT_TRUE(trim);
  EXPECT_EQ(*trim, id(last.ms, 8));  // the last delivered entry itself may go, nothing after it
}

TEST(StreamTrimId, APendingEntryIsNeverTrimmed) {
  const StreamId pending = id(kNowMs - 5 * kDayMs, 2);
  const auto trim = streamTrimId({{"relay", id(kNowMs - 1), pending}}, kNow, hours(24));
  ASSERT_TRUE(trim);
  EXPECT_EQ(*trim, pending);  // MINID keeps ids >= pending
}

TEST(StreamTrimId, TheSlowestGroupHoldsTrimmingBack) {
  const StreamId slow_last = id(kNowMs - 4 * kDayMs);
  const auto trim = streamTrimId({caughtUp("fast", id(kNowMs - 1)), caughtUp("slow", slow_last)},
                                 kNow, hours(24));
  ASSERT_TRUE(trim);
  EXPECT_EQ(*trim, id(slow_last.ms, 1));
}

TEST(StreamTrimId, APendingEntryOfAnyGroupHoldsTrimmingBack) {
  const StreamId pending = id(kNowMs - 6 * kDayMs);
  const auto trim = streamTrimId(
      {caughtUp("a", id(kNowMs - 1)), {"b", id(kNowMs - 1), pending}, caughtUp("c", id(kNowMs))},
      kNow, hours(24));
  ASSERT_TRUE(trim);
  EXPECT_EQ(*trim, pending);
}

TEST(StreamTrimId, AGroupThatReadNothingBlocksAllTrimming) {
  EXPECT_FALSE(
      streamTrimId({caughtUp("relay", id(kNowMs)), caughtUp("new", id(0, 0))}, kNow, hours(24)));
}

TEST(StreamTrimId, PendingEntryAtTheVeryStartBlocksAllTrimming) {
  EXPECT_FALSE(streamTrimId({{"relay", id(kNowMs), id(0, 1)}}, kNow, hours(24)));
}

TEST(StreamTrimId, RetentionLongerThanTheEpochTrimsNothing) {
  EXPECT_FALSE(streamTrimId({caughtUp("relay", id(kNowMs))}, kNow, milliseconds(kNowMs + 1)));
}

TEST(StreamTrimId, LastDeliveredAtTheLargestSequenceMovesToTheNextMillisecond) {
  const StreamId last = id(1000, UINT64_MAX);
  const auto trim = streamTrimId({caughtUp("relay", last)}, kNow, hours(24));
  ASSERT_TRUE(trim);
  EXPECT_EQ(*trim, id(1001, 0));
}

TEST(StreamTrimId, NeverTrimsAnEntryItShouldKeep) {
  // Exhaustive over a small grid: for every group layout, no entry below the returned id is
  // unread, pending, or younger than the retention.
  const std::vector<StreamId> ids = {id(10), id(10, 1), id(20), id(30, 5), id(40), id(50)};
  const WallTime now{milliseconds(60)};
  for (const StreamId last_a : ids) {
    for (const StreamId last_b : ids) {
      for (std::size_t pending_index = 0; pending_index <= ids.size(); ++pending_index) {
        std::optional<StreamId> pending;
        if (pending_index < ids.size() && ids[pending_index] <= last_b) {
          pending = ids[pending_index];
        }
        for (const auto retention : {milliseconds(5), milliseconds(25), milliseconds(45)}) {
          const auto trim =
              streamTrimId({caughtUp("a", last_a), {"b", last_b, pending}}, now, retention);
          if (!trim) continue;
          for (const StreamId entry : ids) {
            if (entry >= *trim) continue;
            EXPECT_LE(entry, last_a);
            EXPECT_LE(entry, last_b);
            if (pending) {
              EXPECT_LT(entry, *pending);
            }
            EXPECT_LT(entry.ms, 60u - static_cast<std::uint64_t>(retention.count()));
          }
        }
      }
    }
  }
}

TEST(TrimHeldBack, APendingEntryOlderThanTheRetentionHoldsTrimmingBack) {
  const StreamId pending = id(kNowMs - 3 * kDayMs, 4);
  const auto held = trimHeldBack({{"relay", id(kNowMs - 1), pending}}, kNow, hours(24));
  ASSERT_TRUE(held);
  EXPECT_EQ(held->group, "relay");
  EXPECT_EQ(held->id, pending);
}

TEST(TrimHeldBack, APendingEntryYoungerThanTheRetentionHoldsNothingBack) {
  EXPECT_FALSE(trimHeldBack({{"relay", id(kNowMs - 1), id(kNowMs - 1000)}}, kNow, hours(24)));
}

TEST(TrimHeldBack, AnUnreadEntryBelowThePendingOneIsWhatHoldsTrimmingBackNotThePendingOne) {
  // Group "slow" has read nothing past 5 days ago: the entry pending in "relay" 3 days ago
  // would not be trimmed without it either.
  EXPECT_FALSE(trimHeldBack({{"relay", id(kNowMs - 1), id(kNowMs - 3 * kDayMs)},
                             caughtUp("slow", id(kNowMs - 5 * kDayMs))},
                            kNow, hours(24)));
}

TEST(TrimHeldBack, TheOldestPendingEntryOfAnyGroupIsNamed) {
  const auto held = trimHeldBack({{"a", id(kNowMs - 1), id(kNowMs - 2 * kDayMs)},
                                  {"b", id(kNowMs - 1), id(kNowMs - 4 * kDayMs, 1)}},
                                 kNow, hours(24));
  ASSERT_TRUE(held);
  EXPECT_EQ(held->group, "b");
  EXPECT_EQ(held->id, id(kNowMs - 4 * kDayMs, 1));
}

TEST(TrimHeldBack, ZeroRetentionTrimsNothingSoNothingIsHeldBack) {
  EXPECT_FALSE(trimHeldBack({{"relay", id(kNowMs - 1), id(1000)}}, kNow, milliseconds(0)));
}

TEST(AgeTrimId, TrimsByAgeAlone) {
  const auto trim = ageTrimId(kNow, hours(24 * 7));
  ASSERT_TRUE(trim);
  EXPECT_EQ(*trim, id(kNowMs - 7 * kDayMs));
}

TEST(AgeTrimId, ZeroRetentionNeverTrims) { EXPECT_FALSE(ageTrimId(kNow, milliseconds(0))); }

TEST(StreamId, ParsesFullAndBareIds) {
  EXPECT_EQ(StreamId::parse("1700000000000-3"), id(1'700'000'000'000, 3));
  EXPECT_EQ(StreamId::parse("42"), id(42, 0));
  EXPECT_EQ(StreamId::parse("18446744073709551615-18446744073709551615"),
            id(UINT64_MAX, UINT64_MAX));
}

TEST(StreamId, RejectsWhatRedisWouldNotAccept) {
  for (const char* bad : {"", "-", "+", "*", "1-", "-1", "1--2", "1-2-3", " 1-2", "1-2 ",
                          "18446744073709551616-0", "a-b", "+1-2"}) {
    EXPECT_FALSE(StreamId::parse(bad)) << bad;
  }
}

TEST(StreamId, OrdersLikeRedis) {
  EXPECT_LT(id(1, 99), id(2, 0));
  EXPECT_LT(id(2, 0), id(2, 1));
  EXPECT_EQ(id(5, 6).toString(), "5-6");
  EXPECT_FALSE(id(UINT64_MAX, UINT64_MAX).next());
}

TEST(StreamId, PreviousIsTheLargestSmallerId) {
  EXPECT_EQ(id(5, 6).previous(), id(5, 5));
  EXPECT_EQ(id(5, 0).previous(), id(4, UINT64_MAX));
  EXPECT_FALSE(id(0, 0).previous());
  EXPECT_EQ(id(7, 0).previous()->next(), id(7, 0));
}

}  // namespace
}  // namespace relay::stream
