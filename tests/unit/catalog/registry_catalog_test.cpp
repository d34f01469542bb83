// What the RegistryCatalog plans for a matched event: each rule's attempt budget is its
// template's `retries` plus one, and a rule that says nothing gets the default (four retries,
// five attempts). And what it makes of occurrences its own rules cannot admit (docs/schedules.md
// "Rolling deploys and cron edits").
#include "catalog/registry_catalog.h"

#include <gtest/gtest.h>

#include <optional>

#include "app/registry.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "schedule/occurrence.h"
#include "unit/app/app_test_util.h"

namespace relay::catalog {
namespace {

TEST(RegistryCatalog, PlansEachRuleWithItsRetriesPlusOneAndFiveAttemptsByDefault) {
  app::testing::AppsRoot root;
  root.writeExecApp("plain");  // no `retries:`
  root.writeFile("picky", "bin/h.sh", "#!/bin/sh\n", 0755);
  root.writeTemplate("picky",
                     "runtime: exec\nevents:\n  - handler: bin/h.sh\n    retries: 1\n"
                     "    pattern: {table_name: [users]}\n");
  auto registry = app::Registry::create({root.path(), {}, {}});
  ASSERT_TRUE(registry.ok()) << registry.error().message;
  RegistryCatalog catalog(**registry, 1024);
  invocation::Message message;
  message.id = "1-0";
  message.fields = {{"event", R"({"table_name":"users"})"}};
  const SystemClock clock;
  const invocation::Classification classification = catalog.classify(message, clock.now());
  ASSERT_EQ(classification.kind, invocation::Classification::Kind::kPlan);
  ASSERT_EQ(classification.plan.invocations.size(), 2u);
  EXPECT_EQ(classification.plan.invocations[0].app, "picky");
  EXPECT_EQ(classification.plan.invocations[0].max_attempts, 2);
  EXPECT_EQ(classification.plan.invocations[1].app, "plain");
  EXPECT_EQ(classification.plan.invocations[1].max_attempts, 5);
}

using Kind = invocation::Classification::Kind;

WallTime at(std::string_view text) {
  return WallTime{std::chrono::seconds(parseRfc3339(text).value().seconds)};
}

/// A PublicationCheck with a scripted answer; records what it was asked.
class ScriptedCheck final : public PublicationCheck {
 public:
  explicit ScriptedCheck(Result<bool> answer) : answer_(std::move(answer)) {}
  Result<bool> publishedAs(const schedule::Occurrence& occurrence,
                           std::string_view message_id) override {
    asked_ = occurrence.id() + " as " + std::string(message_id);
    return answer_;
  }
  Result<bool> copiedAs(const ReplayCopy& copy, std::string_view message_id) override {
    asked_ = copy.replay + ":" + copy.original_id + " as " + std::string(message_id);
    return answer_;
  }
  const std::string& asked() const { return asked_; }

 private:
  Result<bool> answer_;
  std::string asked_;
};

/// `reports` with a nightly at 04:00 UTC; occurrences published at 2024-05-16T01:00:03Z.
class OccurrenceClassification : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.writeFile("reports", "bin/n.sh", "#!/bin/sh\n", 0755);
    root_.writeTemplate("reports",
                        "runtime: exec\nschedules:\n  - name: nightly\n    cron: \"0 4 * * *\"\n"
                        "    handler: bin/n.sh\n");
    auto registry = app::Registry::create({root_.path(), {}, {}});
    ASSERT_TRUE(registry.ok()) << registry.error().message;
    registry_ = std::move(registry).value();
  }
  invocation::Message occurrence(const schedule::Occurrence& occurrence) const {
    invocation::Message message;
    message.id = "1715821203000-0";  // 2024-05-16T01:00:03Z
    message.fields = {{std::string(schedule::kEnvelopeField), occurrence.envelope()},
                      {"event", occurrence.payload("{}")}};
    return message;
  }
  invocation::Classification classify(const schedule::Occurrence& what, OccurrenceChecks checks,
                                      WallTime now = at("2024-05-16T01:00:04Z")) {
    RegistryCatalog catalog(*registry_, 1024, checks);
    return catalog.classify(occurrence(what), now);
  }

  app::testing::AppsRoot root_;
  std::unique_ptr<app::Registry> registry_;
};

// 01:00Z is no firing of "0 4 * * *": the cron some worker had when it published it.
const schedule::Occurrence kOtherCron{"reports", "nightly", at("2024-05-16T01:00:00Z")};

TEST_F(OccurrenceClassification, AnOccurrenceOfAnotherCronRunsWhenRelayPublishedIt) {
  ScriptedCheck published(true);
  const auto what = classify(kOtherCron, {.published = &published});
  ASSERT_EQ(what.kind, Kind::kPlan) << what.reason;
  EXPECT_EQ(what.plan.invocations.at(0).handler, "bin/n.sh");
  EXPECT_EQ(published.asked(), "schedule:reports:nightly:2024-05-16T01:00:00Z as 1715821203000-0");
}

TEST_F(OccurrenceClassification, AnOccurrenceOfAnotherCronRelayDidNotPublishIsMalformed) {
  ScriptedCheck unpublished(false);
  for (PublicationCheck* check :
       {static_cast<PublicationCheck*>(&unpublished), static_cast<PublicationCheck*>(nullptr)}) {
    const auto what = classify(kOtherCron, {.published = check});
    EXPECT_EQ(what.kind, Kind::kBadSchedule);
    EXPECT_NE(what.reason.find("is not a firing of cron \"0 4 * * *\""), std::string::npos)
        << what.reason;
    EXPECT_EQ(what.handler, "bin/n.sh");
  }
}

TEST_F(OccurrenceClassification, AnOccurrenceOfAnotherCronWaitsWhileRedisCannotTell) {
  ScriptedCheck failing(Error::unavailable("redis unreachable"));
  const auto what = classify(kOtherCron, {.published = &failing});
  EXPECT_EQ(what.kind, Kind::kHold);
  EXPECT_NE(what.reason.find("redis unreachable"), std::string::npos) << what.reason;
}

TEST_F(OccurrenceClassification, AnUnknownScheduleWaitsForTheHoldThenIsObsolete) {
  const schedule::Occurrence weekly{"reports", "weekly", at("2024-05-16T01:00:00Z")};
  const schedule::Occurrence other_app{"billing", "nightly", at("2024-05-16T01:00:00Z")};
  const OccurrenceChecks hold_ten_minutes{.unknown_hold = std::chrono::minutes(10)};
  for (const schedule::Occurrence& unknown : {weekly, other_app}) {
    const auto held = classify(unknown, hold_ten_minutes, at("2024-05-16T01:10:02Z"));
    EXPECT_EQ(held.kind, Kind::kHold) << unknown.id();
    EXPECT_NE(held.reason.find("is not known on this worker"), std::string::npos) << held.reason;
    EXPECT_NE(held.reason.find("until 2024-05-16T01:10:03Z"), std::string::npos) << held.reason;
    EXPECT_EQ(classify(unknown, hold_ten_minutes, at("2024-05-16T01:10:03Z")).kind, Kind::kObsolete)
        << unknown.id();
  }
}

}  // namespace
}  // namespace relay::catalog
