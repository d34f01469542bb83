// /metrics: every series of docs/operations.md "Metrics" in a Prometheus text format a strict
// reader accepts, with the values the counters hold.
#include "observability/metrics.h"

#include <gtest/gtest.h>

#include "support/prometheus_text.h"

namespace relay::observability {
namespace {

using relay::testing::PrometheusText;

TEST(MetricsExposition, ParsesBackToTheRecordedValues) {
  Metrics metrics;
  metrics.countEvent("matched");
  metrics.countEvent("matched");
  metrics.countEvent("unmatched");
  metrics.countInvocation("users", "bin/h.sh", "succeeded");
  metrics.countDlqEntry("malformed");
  metrics.countMissingPayload();
  metrics.countReclaimed(3);
  metrics.addInflight(2);
  metrics.setPending(7);
  metrics.countRedisError("xack");
  metrics.countTrimmed("stream", 5);
  metrics.observeInvocationSeconds(0.02);
  metrics.observeInvocationSeconds(3);
  const PrometheusText text(metrics.exposition());
  ASSERT_TRUE(text.ok()) << text.error() << "\n" << metrics.exposition();
  EXPECT_EQ(text.value("relay_events_total", {{"outcome", "matched"}}), 2);
  EXPECT_EQ(text.value("relay_events_total", {{"outcome", "unmatched"}}), 1);
  EXPECT_EQ(text.value("relay_invocations_total",
                       {{"app", "users"}, {"handler", "bin/h.sh"}, {"outcome", "succeeded"}}),
            1);
  EXPECT_EQ(text.value("relay_dlq_entries_total", {{"reason", "malformed"}}), 1);
  EXPECT_EQ(text.value("relay_missing_payload_total"), 1);
  EXPECT_EQ(text.value("relay_reclaimed_total"), 3);
  EXPECT_EQ(text.value("relay_inflight_invocations"), 2);
  EXPECT_EQ(text.value("relay_pending_messages"), 7);
  EXPECT_EQ(text.value("relay_redis_errors_total", {{"op", "xack"}}), 1);
  EXPECT_EQ(text.value("relay_trimmed_entries_total", {{"target", "stream"}}), 5);
  EXPECT_EQ(text.value("relay_invocation_duration_seconds_count"), 2);
  EXPECT_EQ(text.value("relay_invocation_duration_seconds_bucket", {{"le", "0.025"}}), 1);
  EXPECT_EQ(text.value("relay_invocation_duration_seconds_bucket", {{"le", "+Inf"}}), 2);
  EXPECT_DOUBLE_EQ(*text.value("relay_invocation_duration_seconds_sum"), 3.02);
}

// docs/operations.md "Metrics": flow control's outcomes are series of the invocation counter,
// summed by outcome like the others (the console's throughput chart reads them that way).
TEST(MetricsExposition, FlowControlOutcomesAreInvocationSeries) {
  Metrics metrics;
  for (const char* outcome :
       {"deferred", "deferred", "deduplicated", "superseded", "retry_after"}) {
    metrics.countInvocation("shop", "bin/pay.sh", outcome);
  }
  const PrometheusText text(metrics.exposition());
  ASSERT_TRUE(text.ok()) << text.error();
  const auto series = [&text](const char* outcome) {
    return text.value("relay_invocations_total",
                      {{"app", "shop"}, {"handler", "bin/pay.sh"}, {"outcome", outcome}});
  };
  EXPECT_EQ(series("deferred"), 2);
  EXPECT_EQ(series("deduplicated"), 1);
  EXPECT_EQ(series("superseded"), 1);
  EXPECT_EQ(series("retry_after"), 1);
  const auto sums = metrics.sumBy("relay_invocations_total", "outcome");
  EXPECT_EQ(sums.at("deferred"), 2);
  EXPECT_EQ(sums.at("retry_after"), 1);
}

TEST(MetricsExposition, LabelValuesAreEscaped) {
  Metrics metrics;
  metrics.countInvocation("app", "weird\"handler\\with\nnewline", "failed");
  const PrometheusText text(metrics.exposition());
  ASSERT_TRUE(text.ok()) << text.error();
  EXPECT_EQ(text.value("relay_invocations_total", {{"app", "app"},
                                                   {"handler", "weird\"handler\\with\nnewline"},
                                                   {"outcome", "failed"}}),
            1);
}

TEST(MetricsExposition, AppPausedIsOneGaugePerApp) {
  Metrics metrics;
  metrics.setAppPaused("shop", true);
  metrics.setAppPaused("users", true);
  metrics.setAppPaused("users", false);
  const PrometheusText text(metrics.exposition());
  ASSERT_TRUE(text.ok()) << text.error();
  EXPECT_EQ(text.value("relay_app_paused", {{"app", "shop"}}), 1);
  EXPECT_EQ(text.value("relay_app_paused", {{"app", "users"}}), 0);
  EXPECT_NE(metrics.exposition().find("# TYPE relay_app_paused gauge"), std::string::npos);
}

TEST(MetricsExposition, TheInfoSeriesNameOnlyTheLatestMessage) {
  Metrics metrics;
  metrics.setOldestPending(3600, "1-0", "worker-a", "retry_wait");
  metrics.setOldestPending(7200.5, "2-0", "relay:parked", "paused");
  metrics.setTrimHeldBack(7200.5, "relay", "2-0", "paused");
  PrometheusText text(metrics.exposition());
  ASSERT_TRUE(text.ok()) << text.error();
  EXPECT_EQ(text.value("relay_oldest_pending_age_seconds"), 7200.5);
  EXPECT_EQ(text.value("relay_oldest_pending_info",
                       {{"id", "1-0"}, {"consumer", "worker-a"}, {"reason", "retry_wait"}}),
            std::nullopt);
  EXPECT_EQ(text.value("relay_oldest_pending_info",
                       {{"id", "2-0"}, {"consumer", "relay:parked"}, {"reason", "paused"}}),
            1);
  EXPECT_EQ(text.value("relay_trim_held_back_info",
                       {{"group", "relay"}, {"id", "2-0"}, {"reason", "paused"}}),
            1);
  // Nothing pending any more: the ages are 0 and no message is named.
  metrics.setOldestPending(0, "", "", "");
  metrics.setTrimHeldBack(0, "", "", "");
  text = PrometheusText(metrics.exposition());
  EXPECT_EQ(text.value("relay_oldest_pending_age_seconds"), 0);
  EXPECT_EQ(text.value("relay_trim_held_back_seconds"), 0);
  EXPECT_EQ(metrics.exposition().find("relay_oldest_pending_info{"), std::string::npos);
  EXPECT_EQ(metrics.exposition().find("relay_trim_held_back_info{"), std::string::npos);
}

TEST(MetricsExposition, AFreshRegistryAlreadyShowsTheGauges) {
  const PrometheusText text(Metrics().exposition());
  ASSERT_TRUE(text.ok()) << text.error();
  EXPECT_EQ(text.value("relay_pending_messages"), std::nullopt);  // unknown until first refresh
  EXPECT_EQ(text.value("relay_inflight_invocations"), 0);
  EXPECT_EQ(text.value("relay_missing_payload_total"), 0);
  EXPECT_EQ(text.value("relay_group_recreated_total"), 0);
  EXPECT_EQ(text.value("relay_oldest_pending_age_seconds"), std::nullopt);  // until computed
}

}  // namespace
}  // namespace relay::observability
