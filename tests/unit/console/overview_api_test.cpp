// The Overview's pure parts: consumer health and the chart's series.
#include "console/overview_api.h"

#include <gtest/gtest.h>

namespace relay::console {
namespace {

TEST(ConsumerHealth, AHeartbeatIsHealthyWithoutOneIdleTimeDecides) {
  EXPECT_EQ(consumerHealth(true, 10'000'000), "healthy");
  EXPECT_EQ(consumerHealth(false, 1'000), "silent");
  EXPECT_EQ(consumerHealth(false, 300'000), "silent");
  EXPECT_EQ(consumerHealth(false, 300'001), "gone");
}

TEST(ThroughputJson, FillsEveryChartedSeriesWithZeroesPerMinute) {
  std::vector<stream::MinuteCounts> history(3);
  history[0].minute = 100;
  history[1].minute = 101;
  history[1].counts = {{"events:matched", 4}, {"invocations:succeeded", 3}, {"dlq:schedule", 1}};
  history[2].minute = 102;
  history[2].counts = {{"events:matched", 2}};
  const Json json = throughputJson(history);
  EXPECT_EQ(json["minutes"], Json({6000, 6060, 6120}));
  EXPECT_EQ(json["series"]["events:matched"], Json({0, 4, 2}));
  EXPECT_EQ(json["series"]["invocations:succeeded"], Json({0, 3, 0}));
  EXPECT_EQ(json["series"]["events:unmatched"], Json({0, 0, 0}));
  EXPECT_EQ(json["series"]["dlq:schedule"], Json({0, 1, 0}));  // counters a newer worker adds
}

// The page draws flow control's outcomes (docs/apps.md "Flow control") even before any was
// counted, and their counts per minute once there are.
TEST(ThroughputJson, CarriesFlowControlOutcomes) {
  std::vector<stream::MinuteCounts> history(2);
  history[0].minute = 100;
  history[1].minute = 101;
  history[1].counts = {{"invocations:deferred", 7}, {"invocations:superseded", 2}};
  const Json json = throughputJson(history);
  EXPECT_EQ(json["series"]["invocations:deferred"], Json({0, 7}));
  EXPECT_EQ(json["series"]["invocations:superseded"], Json({0, 2}));
  EXPECT_EQ(json["series"]["invocations:deduplicated"], Json({0, 0}));
  EXPECT_EQ(json["series"]["invocations:retry_after"], Json({0, 0}));
}

}  // namespace
}  // namespace relay::console
