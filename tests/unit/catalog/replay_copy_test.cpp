// The replay copy envelope (docs/replay.md "Copies") and how the catalog classifies a copy: a
// producer that writes `relay_replay` itself must gain nothing it could not run otherwise.
#include "catalog/replay_copy.h"

#include <gtest/gtest.h>

#include "app/registry.h"
#include "catalog/registry_catalog.h"
#include "unit/app/app_test_util.h"

namespace relay::catalog {
namespace {

using Kind = invocation::Classification::Kind;

ReplayCopy rules() {
  return {"r-1-abcd", "relay", "1715821203000-0", "audit", "", ReplayCopy::Mode::kRules, ""};
}

TEST(ReplayEnvelope, RoundTrips) {
  ReplayCopy dlq{"r-1-abcd", "relay", "1-0", "audit", "bin/h.sh", ReplayCopy::Mode::kDeadLetter,
                 "2-0"};
  for (const ReplayCopy& copy : {rules(), dlq}) {
    auto parsed = parseReplayEnvelope(copy.envelope());
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(*parsed, copy);
  }
  EXPECT_EQ(rules().originalMs(), 1715821203000);
}

TEST(ReplayEnvelope, RefusesHostileInputNamingTheMember) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "JSON object"},
      {"[]", "JSON object"},
      {"{\"replay\":\"r\"", "JSON object"},
      {R"({"group":"relay","original_id":"1-0","app":"audit","mode":"rules"})", "\"replay\""},
      {R"({"replay":"","group":"relay","original_id":"1-0","app":"audit","mode":"rules"})",
       "\"replay\""},
      {R"({"replay":1,"group":"relay","original_id":"1-0","app":"audit","mode":"rules"})",
       "\"replay\""},
      {R"({"replay":"r","group":"relay","original_id":"1","app":"audit","mode":"rules"})",
       "original_id"},
      {R"({"replay":"r","group":"relay","original_id":"x-0","app":"audit","mode":"rules"})",
       "original_id"},
      {R"({"replay":"r","group":"relay","original_id":"1-0","app":"../etc","mode":"rules"})",
       "\"app\""},
      {R"({"replay":"r","group":"relay","original_id":"1-0","app":"audit","mode":"run"})",
       "\"mode\""},
      {R"({"replay":"r","group":"relay","original_id":"1-0","app":"audit","mode":"dlq"})",
       "\"dlq_id\""},
      {R"({"replay":"r","group":"relay","original_id":"1-0","app":"audit","mode":"rules",)"
       R"("handler":["x"]})",
       "\"handler\""},
  };
  for (const auto& [text, named] : cases) {
    auto parsed = parseReplayEnvelope(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message.find(named), std::string::npos)
        << text << ": " << parsed.error().message;
  }
}

/// Answers whether a driver published the copy, as the copies hash would.
class CopiesHash final : public PublicationCheck {
 public:
  explicit CopiesHash(Result<bool> answer) : answer_(std::move(answer)) {}
  Result<bool> publishedAs(const schedule::Occurrence&, std::string_view) override { return false; }
  Result<bool> copiedAs(const ReplayCopy& copy, std::string_view message_id) override {
    asked_ = copy.replay + " " + copy.original_id + " as " + std::string(message_id);
    return answer_;
  }
  std::string asked_;

 private:
  Result<bool> answer_;
};

/// `audit` runs bin/h.sh for kind a events whose `at` is within 1 s before now.
class CopyClassification : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.writeFile("audit", "bin/h.sh", "#!/bin/sh\n", 0755);
    root_.writeFile("audit", "bin/other.sh", "#!/bin/sh\n", 0755);
    root_.writeTemplate("audit",
                        "runtime: exec\nevents:\n  - handler: bin/h.sh\n"
                        "    pattern: {kind: [a], at: [{gt: \"now()-1s\"}]}\n"
                        "  - handler: bin/other.sh\n    pattern: {kind: [b]}\n");
    auto registry = app::Registry::create({root_.path(), {}, {}});
    ASSERT_TRUE(registry.ok()) << registry.error().message;
    registry_ = std::move(registry).value();
  }
  invocation::Classification classify(const ReplayCopy& copy, PublicationCheck* check,
                                      std::string event) {
    RegistryCatalog catalog(*registry_, 4096, {.published = check}, "relay");
    invocation::Message message;
    message.id = "1800000000000-0";
    message.fields = {{"event", std::move(event)}, {std::string(kReplayField), copy.envelope()}};
    return catalog.classify(message, WallTime(std::chrono::seconds(1'800'000'000)));
  }
  // Published at 2024-05-16T01:00:03Z, judged then: at 01:00:02.5Z was within 1 s.
  const std::string then_ = R"({"kind":"a","at":"2024-05-16T01:00:02.500Z"})";
  app::testing::AppsRoot root_;
  std::unique_ptr<app::Registry> registry_;
};

TEST_F(CopyClassification, APublishedCopyIsJudgedAtItsOriginalsPublication) {
  CopiesHash published(true);
  const auto what = classify(rules(), &published, then_);
  ASSERT_EQ(what.kind, Kind::kPlan) << what.reason;
  ASSERT_EQ(what.plan.invocations.size(), 1u);
  EXPECT_EQ(what.plan.invocations[0].handler, "bin/h.sh");
  EXPECT_EQ(what.plan.invocations[0].trigger, runtime::Trigger::kReplay);
  ASSERT_TRUE(what.replay);
  EXPECT_EQ(what.replay->original_id, "1715821203000-0");
  EXPECT_EQ(published.asked_, "r-1-abcd 1715821203000-0 as 1800000000000-0");
}

// What a producer could write: a copy no driver published runs nothing, whatever it claims
// (a dead letter's handler without matching, an earlier time for a now() window).
TEST_F(CopyClassification, ACopyNoDriverPublishedRunsNothing) {
  CopiesHash unpublished(false);
  ReplayCopy forged{"r-1-abcd", "relay",        "1715821203000-0",
                    "audit",    "bin/other.sh", ReplayCopy::Mode::kDeadLetter,
                    "1-0"};
  for (PublicationCheck* check :
       {static_cast<PublicationCheck*>(&unpublished), static_cast<PublicationCheck*>(nullptr)}) {
    for (const ReplayCopy& copy : {rules(), forged}) {
      const auto what = classify(copy, check, then_);
      EXPECT_EQ(what.kind, Kind::kMalformed);
      EXPECT_TRUE(what.plan.invocations.empty());
      EXPECT_NE(what.reason.find("published no copy"), std::string::npos) << what.reason;
    }
  }
  // An unreadable envelope is malformed too, never an ordinary event.
  RegistryCatalog catalog(*registry_, 4096, {.published = &unpublished}, "relay");
  invocation::Message message;
  message.id = "1800000000000-0";
  message.fields = {{"event", R"({"kind":"b"})"}, {std::string(kReplayField), "{"}};
  EXPECT_EQ(catalog.classify(message, WallTime{}).kind, Kind::kMalformed);
}

TEST_F(CopyClassification, AnotherGroupsCopyIsNotThisWorkersAndAnUnsureCheckWaits) {
  CopiesHash published(true);
  ReplayCopy other = rules();
  other.group = "elsewhere";
  EXPECT_EQ(classify(other, &published, then_).kind, Kind::kUnmatched);
  CopiesHash failing(Error::unavailable("redis unreachable"));
  const auto what = classify(rules(), &failing, then_);
  EXPECT_EQ(what.kind, Kind::kHold);
  EXPECT_NE(what.reason.find("redis unreachable"), std::string::npos);
}

TEST_F(CopyClassification, ARuleCopyRunsOnlyTheChosenRuleThatMatchedThen) {
  CopiesHash published(true);
  ReplayCopy only = rules();
  only.handler = "bin/other.sh";
  EXPECT_EQ(classify(only, &published, then_).kind, Kind::kUnmatched);
  // Judged at its publication, not now: an hour later the now() window had passed then too.
  ReplayCopy late = rules();
  late.original_id = "1715824803000-0";
  EXPECT_EQ(classify(late, &published, then_).kind, Kind::kUnmatched);
}

}  // namespace
}  // namespace relay::catalog
