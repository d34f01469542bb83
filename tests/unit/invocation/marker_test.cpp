#include "invocation/marker.h"

#include <gtest/gtest.h>

namespace relay::invocation {
namespace {

TEST(Marker, RoundTripsEveryState) {
  for (const char* text :
       {"running:2:abc:1700000000000", "failed:1:1700000060000:abc", "succeeded:3:abc",
        "exhausted:5:abc", "exhausted:5:abc:dlq", "failed:0:1700000060000:-"}) {
    const auto marker = Marker::parse(text);
    ASSERT_TRUE(marker) << text;
    EXPECT_EQ(marker->format(), text);
  }
}

TEST(Marker, ReadsTheFields) {
  const auto running = Marker::parse("running:2:tok:1700000000000");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, Marker::State::kRunning);
  EXPECT_EQ(running->attempt, 2);
  EXPECT_EQ(running->token, "tok");
  EXPECT_EQ(running->deadline_ms, 1700000000000);
  EXPECT_FALSE(running->terminal());
  EXPECT_TRUE(Marker::parse("succeeded:1:tok")->terminal());
  EXPECT_EQ(Marker::parse("failed:2:1700000060000:tok")->token, "tok");
  EXPECT_FALSE(Marker::parse("exhausted:5:t")->terminal());
  EXPECT_TRUE(Marker::parse("exhausted:5:t:dlq")->terminal());
}

TEST(Marker, AClaimedMarkerHoldsTheInvocationLikeARunningOne) {
  const auto claimed = Marker::parse("claimed:3:tok:1700000000000");
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->state, Marker::State::kClaimed);
  EXPECT_EQ(claimed->attempt, 3);
  EXPECT_EQ(claimed->deadline_ms, 1700000000000);
  EXPECT_TRUE(claimed->held());
  EXPECT_TRUE(Marker::parse("running:3:tok:1")->held());
  EXPECT_FALSE(Marker::parse("failed:3:1:tok")->held());
  EXPECT_EQ(claimed->format(), "claimed:3:tok:1700000000000");
  EXPECT_FALSE(Marker::parse("claimed:3:tok"));
}

// docs/pipeline.md "Cancellation", docs/apps.md "Deadlines".
TEST(Marker, CancelledAndExpiredRoundTripAndOweTheirEntryOnlyWhenDeadLettered) {
  for (const char* text : {"cancelled:0:c1", "cancelled:2:c1:owed", "cancelled:2:c1:dlq",
                           "expired:1:t", "expired:1:t:dlq"}) {
    const auto marker = Marker::parse(text);
    ASSERT_TRUE(marker) << text;
    EXPECT_EQ(marker->format(), text);
  }
  EXPECT_TRUE(Marker::parse("cancelled:0:c1")->terminal());
  EXPECT_FALSE(Marker::parse("cancelled:0:c1")->owesDlq());
  EXPECT_TRUE(Marker::parse("cancelled:2:c1:owed")->owesDlq());
  EXPECT_FALSE(Marker::parse("cancelled:2:c1:owed")->terminal());
  EXPECT_TRUE(Marker::parse("cancelled:2:c1:dlq")->terminal());
  EXPECT_TRUE(Marker::parse("expired:1:t")->owesDlq());
  EXPECT_FALSE(Marker::parse("expired:1:t")->terminal());
  EXPECT_TRUE(Marker::parse("expired:1:t:dlq")->terminal());
  EXPECT_FALSE(Marker::parse("cancelled:1:t:x"));
  EXPECT_FALSE(Marker::parse("expired:1:t:owed"));
}

TEST(Marker, RejectsMalformedText) {
  for (const char* text : {"", "running", "running:x:t:1", "running:1:t", "failed:1", "failed:1:x",
                           "succeeded", "succeeded:1:t:extra", "failed:1:5:t:x", "exhausted:1",
                           "exhausted:1:t:dl", "done:1", "running:-1:t:5"}) {
    EXPECT_FALSE(Marker::parse(text)) << text;
  }
}

TEST(Marker, ReadsMarkersOfAnOlderRelayWithoutTokens) {
  const auto succeeded = Marker::parse("succeeded:1");
  ASSERT_TRUE(succeeded);
  EXPECT_TRUE(succeeded->terminal());
  EXPECT_EQ(succeeded->token, "");
  const auto failed = Marker::parse("failed:1:1700000060000");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->next_attempt_ms, 1700000060000);
}

}  // namespace
}  // namespace relay::invocation
