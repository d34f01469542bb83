// Why a message is pending, from what Redis holds (docs/operations.md "Pending messages"): the
// pure explanation behind `relay pending ls`, `relay health` and the housekeeper's metrics.
#include "stream/pending_reason.h"

#include <gtest/gtest.h>

#include "fakes/fake_catalog.h"
#include "invocation/keys.h"

// Its own namespace: the target's files are compiled as one unit (retention_test has a kNow).
namespace relay::stream::pending_reason_test {
namespace {

constexpr std::int64_t kNow = 1'790'000'000'000;
const std::string kId = std::to_string(kNow - 3'600'000) + "-0";  // an hour old
const std::string kPlan = "e 3 30000 shop/bin/pay.sh\ne 1 30000 mail/bin/send.sh\n";

PendingEntry entry(std::string consumer = "worker-a") { return {kId, std::move(consumer), 500, 2}; }

PendingFacts facts(std::vector<std::pair<std::string, std::string>> state) {
  PendingFacts out;
  out.state = std::move(state);
  out.now_ms = kNow;
  out.owner_alive = true;
  return out;
}

std::string ms(std::int64_t value) { return std::to_string(value); }

TEST(PendingReason, AnHourOldMessageWithoutStateWasNeverStarted) {
  const PendingReport report = explainPending(entry(), facts({}));
  EXPECT_EQ(report.reason.kind, PendingKind::kNoState);
  EXPECT_EQ(report.age_ms, 3'600'000);
  EXPECT_EQ(report.entry.deliveries, 2);
  EXPECT_NE(describe(report).find("queued in worker-a"), std::string::npos) << describe(report);
  PendingFacts gone = facts({});
  gone.owner_alive = false;
  EXPECT_NE(describe(explainPending(entry(), gone)).find("no heartbeat"), std::string::npos);
}

TEST(PendingReason, ALiveRunningClaimNamesItsWorkerAndDeadline) {
  const PendingReport report = explainPending(
      entry(),
      facts({{"relay:plan", kPlan}, {"shop/bin/pay.sh", "running:2:tok:" + ms(kNow + 45'000)}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kRunning);
  EXPECT_EQ(report.reason.app, "shop");
  EXPECT_EQ(report.reason.handler, "bin/pay.sh");
  EXPECT_EQ(report.reason.attempt, 2);
  EXPECT_EQ(report.reason.until_ms, kNow + 45'000);
  EXPECT_EQ(report.plan, (std::vector<std::string>{"shop/bin/pay.sh", "mail/bin/send.sh"}));
  const std::string text = describe(report);
  EXPECT_NE(text.find("running on worker-a"), std::string::npos) << text;
  EXPECT_NE(text.find("in 45s"), std::string::npos) << text;
}

TEST(PendingReason, AClaimNotStartedYetIsClaimedAndAnExpiredOneSaysSo) {
  EXPECT_EQ(explainPending(entry(), facts({{"relay:plan", kPlan},
                                           {"shop/bin/pay.sh", "claimed:1:t:" + ms(kNow + 1)}}))
                .reason.kind,
            PendingKind::kClaimed);
  const PendingReport expired = explainPending(
      entry(), facts({{"relay:plan", kPlan}, {"shop/bin/pay.sh", "running:1:t:" + ms(kNow - 1)}}));
  EXPECT_EQ(expired.reason.kind, PendingKind::kClaimExpired);
  EXPECT_EQ(expired.reason.until_ms, kNow - 1);
}

TEST(PendingReason, ARetryWaitsForItsBackoff) {
  const PendingReport report =
      explainPending(entry(), facts({{"relay:plan", kPlan},
                                     {"shop/bin/pay.sh", "failed:1:" + ms(kNow + 240'000) + ":t"},
                                     {"mail/bin/send.sh", "succeeded:1:t"}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kRetryWait);
  EXPECT_EQ(report.reason.until_ms, kNow + 240'000);
  EXPECT_NE(describe(report).find("in 4m"), std::string::npos) << describe(report);
}

TEST(PendingReason, AnInvocationThatMayStartNowOutranksARetryThatWaits) {
  // The start script claims the first due invocation: the message waits for a worker.
  const PendingReport report = explainPending(
      entry(),
      facts({{"relay:plan", kPlan}, {"shop/bin/pay.sh", "failed:1:" + ms(kNow + 240'000) + ":t"}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kDue);
  EXPECT_EQ(report.reason.app, "mail");
}

TEST(PendingReason, APausedAppIsNamed) {
  PendingFacts paused = facts({{"relay:plan", kPlan}, {"mail/bin/send.sh", "succeeded:1:t"}});
  paused.paused_apps = {"shop"};
  const PendingReport report = explainPending(entry(), paused);
  EXPECT_EQ(report.reason.kind, PendingKind::kPaused);
  EXPECT_EQ(report.reason.app, "shop");
  EXPECT_NE(describe(report).find("relay app resume shop"), std::string::npos);
}

TEST(PendingReason, AnExhaustedInvocationWithoutItsEntryOwesIt) {
  const PendingReport report =
      explainPending(entry(), facts({{"relay:plan", kPlan},
                                     {"shop/bin/pay.sh", "exhausted:3:t"},
                                     {"mail/bin/send.sh", "succeeded:1:t"}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kOwesDlq);
  EXPECT_EQ(report.reason.attempt, 3);
}

TEST(PendingReason, TerminalButPendingIsResolvedAndRetainedIsRetained) {
  EXPECT_EQ(explainPending(entry(), facts({{"relay:plan", kPlan},
                                           {"shop/bin/pay.sh", "exhausted:3:t:dlq"},
                                           {"mail/bin/send.sh", "succeeded:1:t"}}))
                .reason.kind,
            PendingKind::kResolved);
  EXPECT_EQ(explainPending(entry(), facts({{"relay:plan", kPlan},
                                           {"shop/bin/pay.sh", "succeeded:1:t"},
                                           {"relay:retained", "1"}}))
                .reason.kind,
            PendingKind::kRetained);
}

TEST(PendingReason, WhatCannotBeReadIsCorrupt) {
  const PendingReport marker =
      explainPending(entry(), facts({{"relay:plan", kPlan}, {"shop/bin/pay.sh", "runnin:1:t:5"}}));
  EXPECT_EQ(marker.reason.kind, PendingKind::kCorrupt);
  EXPECT_EQ(marker.reason.app, "shop");
  EXPECT_NE(marker.reason.detail.find("runnin:1:t:5"), std::string::npos);
  EXPECT_EQ(explainPending(entry(), facts({{"relay:plan", "nonsense"}})).reason.kind,
            PendingKind::kCorrupt);
  PendingFacts wrong_type = facts({});
  wrong_type.state_error = "WRONGTYPE Operation against a key holding the wrong kind of value";
  const PendingReport unreadable = explainPending(entry(), wrong_type);
  EXPECT_EQ(unreadable.reason.kind, PendingKind::kCorrupt);
  EXPECT_NE(describe(unreadable).find("WRONGTYPE"), std::string::npos);
}

TEST(PendingReason, TheCatalogTellsAnUnknownAppFromAnUnavailableOne) {
  testing::FakeCatalog catalog;
  const auto state = facts({{"relay:plan", kPlan}, {"mail/bin/send.sh", "succeeded:1:t"}});
  EXPECT_EQ(explainPending(entry(), state, &catalog).reason.kind, PendingKind::kUnknownApp);
  catalog.app("shop", {"bin/pay.sh"}, /*available=*/false);
  const PendingReport unavailable = explainPending(entry(), state, &catalog);
  EXPECT_EQ(unavailable.reason.kind, PendingKind::kUnavailable);
  catalog.setAvailable("shop", true);
  EXPECT_EQ(explainPending(entry(), state, &catalog).reason.kind, PendingKind::kDue);
  // Without a catalog nothing is known about apps: the invocation is due.
  EXPECT_EQ(explainPending(entry(), state).reason.kind, PendingKind::kDue);
}

TEST(PendingReason, AParkedMessageWaitsInAnIndexOrIsStuck) {
  PendingFacts waiting = facts({{"relay:plan", kPlan},
                                {"shop/bin/pay.sh", "failed:1:" + ms(kNow + 60'000) + ":t"},
                                {"mail/bin/send.sh", "succeeded:1:t"}});
  waiting.due_at_ms = kNow + 60'000;
  const PendingReport parked = explainPending(entry("relay:parked"), waiting);
  EXPECT_TRUE(parked.parked);
  EXPECT_EQ(parked.reason.kind, PendingKind::kRetryWait);
  // The same message without its due-index entry: nothing takes it back.
  waiting.due_at_ms.reset();
  const PendingReport stuck = explainPending(entry("relay:parked"), waiting);
  EXPECT_EQ(stuck.reason.kind, PendingKind::kParked);
  EXPECT_NE(stuck.reason.detail.find("retry_wait"), std::string::npos);
  // A paused app's message in the paused queue is paused, parked.
  PendingFacts paused = facts({{"relay:plan", kPlan}, {"mail/bin/send.sh", "succeeded:1:t"}});
  paused.paused_apps = {"shop"};
  paused.paused_queue_apps = {"shop"};
  EXPECT_EQ(explainPending(entry("relay:parked"), paused).reason.kind, PendingKind::kPaused);
}

// docs/apps.md "Flow control": an invocation waiting for its flow control says why (its
// `relay:wait:` field) and its earliest start.
PendingReport waitingFor(const std::string& wait) {
  return explainPending(entry(), facts({{"relay:plan", kPlan},
                                        {"relay:wait:shop/bin/pay.sh", wait},
                                        {"mail/bin/send.sh", "succeeded:1:t"}}));
}

TEST(PendingReason, AThrottledInvocationNamesItsTurn) {
  const PendingReport report = waitingFor("throttled:" + ms(kNow + 90'000));
  EXPECT_EQ(report.reason.kind, PendingKind::kThrottled);
  EXPECT_EQ(report.reason.app, "shop");
  EXPECT_EQ(report.reason.until_ms, kNow + 90'000);
  EXPECT_EQ(kindName(report.reason.kind), "throttled");
  EXPECT_NE(describe(report).find("shop/bin/pay.sh is throttled: its turn starts at "
                                  "2026-09-21T14:14:50Z (in 1m30s)"),
            std::string::npos)
      << describe(report);
}

TEST(PendingReason, AKeyBusyInvocationWaitsForItsKeyUntilWoken) {
  const PendingReport report = waitingFor("key_busy:0");
  EXPECT_EQ(report.reason.kind, PendingKind::kKeyBusy);
  EXPECT_EQ(report.reason.until_ms, 0);
  EXPECT_EQ(describe(report),
            "shop/bin/pay.sh waits for its key: it starts when a running invocation of its key "
            "ends");
  const PendingReport first = waitingFor("key_busy:" + ms(kNow + 30'000));
  EXPECT_NE(describe(first).find("(looked at again at 2026-09-21T14:13:50Z, in 30s)"),
            std::string::npos)
      << describe(first);
  // Parked without a due-index entry, a key's waiter is not stuck: its key's queue wakes it.
  PendingFacts queued = facts({{"relay:plan", kPlan},
                               {"relay:wait:shop/bin/pay.sh", "key_busy:0"},
                               {"mail/bin/send.sh", "succeeded:1:t"}});
  EXPECT_EQ(explainPending(entry("relay:parked"), queued).reason.kind, PendingKind::kKeyBusy);
}

TEST(PendingReason, ADebouncedInvocationRunsAtTheEndOfItsQuietPeriod) {
  const PendingReport report = waitingFor("debounced:" + ms(kNow + 5'000));
  EXPECT_EQ(report.reason.kind, PendingKind::kDebounced);
  EXPECT_NE(describe(report).find("is debounced: it runs at 2026-09-21T14:13:25Z (in 5s) unless "
                                  "a newer event of its key replaces it"),
            std::string::npos)
      << describe(report);
  // A throttled or debounced message parked without its due-index entry is stuck.
  PendingFacts lost = facts({{"relay:plan", kPlan},
                             {"relay:wait:shop/bin/pay.sh", "debounced:" + ms(kNow + 5'000)},
                             {"mail/bin/send.sh", "succeeded:1:t"}});
  EXPECT_EQ(explainPending(entry("relay:parked"), lost).reason.kind, PendingKind::kParked);
}

TEST(PendingReason, AWaitWhoseTimeCameIsDueAndADueInvocationOutranksAWait) {
  EXPECT_EQ(waitingFor("throttled:" + ms(kNow - 1)).reason.kind, PendingKind::kDue);
  const PendingReport report = explainPending(
      entry(), facts({{"relay:plan", kPlan}, {"relay:wait:shop/bin/pay.sh", "key_busy:0"}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kDue);
  EXPECT_EQ(report.reason.app, "mail");
}

TEST(PendingReason, ARetryAfterSaysTheHandlerAskedForIt) {
  const PendingReport report =
      explainPending(entry(), facts({{"relay:plan", kPlan},
                                     {"shop/bin/pay.sh", "deferred:1:" + ms(kNow + 30'000) + ":t"},
                                     {"mail/bin/send.sh", "succeeded:1:t"}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kRetryWait);
  EXPECT_EQ(report.reason.detail, "retry-after");
  EXPECT_NE(describe(report).find("shop/bin/pay.sh asked to run again later (exit 75, not "
                                  "charged); it runs again at"),
            std::string::npos)
      << describe(report);
}

TEST(PendingReason, AStateWithoutAPlanIsReadFromItsInvocationFields) {
  const PendingReport report =
      explainPending(entry(), facts({{"shop/bin/pay.sh", "failed:2:" + ms(kNow + 1'000) + ":t"}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kRetryWait);
  EXPECT_EQ(report.plan, (std::vector<std::string>{"shop/bin/pay.sh"}));
}

TEST(PendingReason, AStateWithOnlyTheDeathsCountIsNeverStarted) {
  const PendingReport report = explainPending(entry(), facts({{"relay:deaths", "2"}}));
  EXPECT_EQ(report.reason.kind, PendingKind::kNoState);
  EXPECT_NE(describe(report).find("2 worker(s) died holding it"), std::string::npos)
      << describe(report);
}

TEST(PendingReason, EveryKindHasAName) {
  for (int kind = 0; kind <= static_cast<int>(PendingKind::kCorrupt); ++kind) {
    EXPECT_FALSE(kindName(static_cast<PendingKind>(kind)).empty()) << kind;
  }
  EXPECT_EQ(kindName(PendingKind::kRetryWait), "retry_wait");
  EXPECT_EQ(kindName(PendingKind::kOwesDlq), "owes_dlq");
  EXPECT_EQ(kindName(PendingKind::kNoState), "no_state");
  EXPECT_EQ(idMillis("1790000000000-3"), 1'790'000'000'000);
  EXPECT_EQ(idMillis("junk"), 0);
}

}  // namespace
}  // namespace relay::stream::pending_reason_test
