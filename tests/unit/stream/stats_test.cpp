// The persisted statistics' field format (docs/operations.md "Statistics"): written by the
// lifecycle scripts, read back by `relay stats`.
#include <gtest/gtest.h>

#include "stream/handler_stats.h"

namespace relay::stream {
namespace {

TEST(StatsField, IsAppSlashHandlerColonCounter) {
  EXPECT_EQ(statsField("users", "bin/on-insert.sh", kStatsSucceeded),
            "users/bin/on-insert.sh:succeeded");
}

TEST(ParseStats, GroupsCountersPerHandlerSortedByAppThenHandler) {
  const auto rows = parseStats({{"orders/b.fn:failed", "2"},
                                {"users/a.fn:succeeded", "5"},
                                {"orders/a.fn:succeeded", "1"},
                                {"orders/b.fn:dlq", "1"},
                                {"orders/b.fn:duration_seconds", "1.5"},
                                {"orders/b.fn:succeeded", "3"}});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].app, "orders");
  EXPECT_EQ(rows[0].handler, "a.fn");
  EXPECT_EQ(rows[1].handler, "b.fn");
  EXPECT_EQ(rows[1].succeeded, 3);
  EXPECT_EQ(rows[1].failed, 2);
  EXPECT_EQ(rows[1].dead_lettered, 1);
  EXPECT_DOUBLE_EQ(rows[1].duration_seconds, 1.5);
  EXPECT_EQ(rows[1].runs(), 5);
  EXPECT_EQ(rows[2].app, "users");
}

TEST(ParseStats, ReadsTheFlowControlCounters) {
  const auto rows = parseStats({{"shop/pay.sh:deferred", "7"},
                                {"shop/pay.sh:deduplicated", "3"},
                                {"shop/pay.sh:superseded", "2"},
                                {"shop/pay.sh:retry_after", "4"},
                                {"shop/pay.sh:succeeded", "5"},
                                {"shop/pay.sh:failed", "1"}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].deferred, 7);
  EXPECT_EQ(rows[0].deduplicated, 3);
  EXPECT_EQ(rows[0].superseded, 2);
  EXPECT_EQ(rows[0].retry_after, 4);
  // A run that asked to be retried later ran the handler: it is a run, not a failure.
  EXPECT_EQ(rows[0].failed, 1);
  EXPECT_EQ(rows[0].runs(), 10);
}

// docs/pipeline.md "Cancellation": a run stopped by relay cancel ran the handler: a run, not a
// failure.
TEST(ParseStats, ReadsTheCancelledRunsAsRuns) {
  const auto rows = parseStats({{"shop/pay.sh:cancelled", "2"},
                                {"shop/pay.sh:succeeded", "5"},
                                {"shop/pay.sh:failed", "1"}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].cancelled, 2);
  EXPECT_EQ(rows[0].failed, 1);
  EXPECT_EQ(rows[0].runs(), 8);
}

TEST(ParseStats, HandlerPathsMayHoldSlashesAndColons) {
  const auto rows = parseStats({{"app/bin/x:y.sh:failed", "4"}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].app, "app");
  EXPECT_EQ(rows[0].handler, "bin/x:y.sh");
  EXPECT_EQ(rows[0].failed, 4);
}

TEST(ParseStats, MalformedMessagesCountUnderDashes) {
  const auto rows = parseStats({{"-/-:dlq", "7"}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].app, "-");
  EXPECT_EQ(rows[0].handler, "-");
  EXPECT_EQ(rows[0].dead_lettered, 7);
}

TEST(ParseStats, SkipsUnknownCountersAndUnparsableValues) {
  const auto rows = parseStats({{"a/h:succeeded", "x"},
                                {"a/h:future_counter", "3"},
                                {"no-slash:failed", "1"},
                                {"a/h", "1"},
                                {"a/h:duration_seconds", "1.5s"},
                                {"a/h:failed", "2"}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].succeeded, 0);
  EXPECT_EQ(rows[0].failed, 2);
  EXPECT_DOUBLE_EQ(rows[0].duration_seconds, 0);
}

}  // namespace
}  // namespace relay::stream
