// explain(): the first failing condition with the event's actual value, and a verdict that
// always agrees with the RuleIndex (checked on the differential generator's rules and events).
#include "pattern/explain.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "pattern/compiler.h"
#include "pattern/evaluator.h"
#include "pattern/rule_index.h"
#include "unit/pattern/pattern_generator.h"

namespace relay::pattern {
namespace {

const Instant kNow = *parseRfc3339("2026-01-01T10:00:00Z");

std::shared_ptr<const Pattern> compiled(const std::string& yaml) {
  CompileResult result = compile(YAML::Load(yaml));
  if (auto* errors = std::get_if<std::vector<CompileError>>(&result)) {
    ADD_FAILURE() << yaml << ": " << errors->front().message;
    return std::make_shared<const Pattern>(std::vector<Field>{});
  }
  return std::get<std::shared_ptr<const Pattern>>(result);
}

// The explanation's one line, for a pattern in YAML and an event in JSON.
std::string why(const std::string& pattern, const std::string& json) {
  const auto rule = compiled(pattern);
  Result<event::Event> event = event::decode(json);
  EXPECT_TRUE(event.ok()) << json;
  if (!event.ok()) return "";
  return explain(*rule, *event, kNow).toString();
}

TEST(Explain, MatchSaysMatch) {
  EXPECT_EQ(why("status: [COMPLETED]", R"({"status":"COMPLETED"})"), "match");
}

TEST(Explain, NamesTheNestedPathTheActualValueAndTheAlternatives) {
  EXPECT_EQ(why("new_image: {status: [COMPLETED]}", R"({"new_image":{"status":"PENDING","id":7}})"),
            R"(new_image.status: got "PENDING", wanted one of ["COMPLETED"])");
}

TEST(Explain, ReportsTheFirstFailingFieldInPatternOrder) {
  EXPECT_EQ(why("a: [1]\nb: [2]\nc: [3]", R"({"a":1,"b":5,"c":6})"), "b: got 5, wanted one of [2]");
}

TEST(Explain, ListsEveryAlternativeOfTheField) {
  EXPECT_EQ(why("id: [{prefix: \"user_\"}, {prefix: \"org_\"}, 12]", R"({"id":"team_1"})"),
            R"(id: got "team_1", wanted one of [{prefix: "user_"}, {prefix: "org_"}, 12])");
}

TEST(Explain, SaysWhyNothingWasThere) {
  EXPECT_EQ(why("status: [OK]", R"({"other":1})"),
            R"(status: got nothing (no such field), wanted one of ["OK"])");
  EXPECT_EQ(why("new_image: {status: [OK]}", R"({"other":1})"),
            R"(new_image.status: got nothing (new_image is absent), wanted one of ["OK"])");
  EXPECT_EQ(why("new_image: {status: [OK]}", R"({"new_image":"x"})"),
            "new_image.status: got nothing (new_image is a string, not an object), wanted one "
            R"(of ["OK"])");
}

TEST(Explain, ShowsTheTypeThroughTheRendering) {
  EXPECT_EQ(why("n: [12]", R"({"n":"12"})"), R"(n: got "12", wanted one of [12])");
  EXPECT_EQ(why("n: [12]", R"({"n":12.50})"), "n: got 12.50, wanted one of [12]");
}

TEST(Explain, ExistsFalseFailsOnAPresentNull) {
  EXPECT_EQ(why("deleted_at: [{exists: false}]", R"({"deleted_at":null})"),
            "deleted_at: got null, wanted one of [{exists: false}]");
}

TEST(Explain, TemporalConditionsShowTheCutOffInstant) {
  EXPECT_EQ(why("at: [{gt: \"now()-5m\"}]", R"({"at":"2026-01-01T09:00:00Z"})"),
            R"(at: got "2026-01-01T09:00:00Z", wanted one of [{gt: "now()-5m"}] with now() = )"
            "2026-01-01T10:00:00Z");
}

TEST(Explain, ArraysAreReportedWholeAtTheField) {
  EXPECT_EQ(why("items: {sku: [A]}", R"({"items":[{"sku":"B"},{"sku":"C"}]})"),
            R"(items: got [{"sku":"B"},{"sku":"C"}], wanted one of [{"sku": ["A"]}])");
}

TEST(Explain, AlternativeSubObjectsAreReportedAtTheField) {
  EXPECT_EQ(why("result: [{status: [OK]}, {status: [DEGRADED]}]", R"({"result":{"status":"X"}})"),
            R"(result: got {"status":"X"}, wanted one of [{"status": ["OK"]}, {"status": )"
            R"(["DEGRADED"]}])");
}

TEST(Explain, LongValuesAreCutAndOddNamesQuoted) {
  const std::string long_text(300, 'x');
  const std::string line = why("\"a.b\": [short]", R"({"a.b":")" + long_text + R"("})");
  EXPECT_EQ(line.rfind(R"("a.b": got "xxx)", 0), 0u) << line;
  EXPECT_NE(line.find(R"(xxx..., wanted one of ["short"])"), std::string::npos) << line;
  EXPECT_LT(line.size(), 200u);
}

TEST(Explain, FailurePointsAtAConditionThatReallyFails) {
  const auto rule = compiled("a: {b: {c: [1]}}\nd: [2]");
  Result<event::Event> event = event::decode(R"({"a":{"b":{"c":5}},"d":2})");
  ASSERT_TRUE(event.ok());
  const Explanation explanation = explain(*rule, *event, kNow);
  ASSERT_FALSE(explanation.matched);
  ASSERT_TRUE(explanation.failure);
  EXPECT_EQ(explanation.failure->path, "a.b.c");
  EXPECT_EQ(explanation.failure->field->name, "c");
  EXPECT_FALSE(fieldHolds(*explanation.failure->field, explanation.failure->parent, kNow));
}

// explain() against the RuleIndex on the generated rules and events of the index's own
// differential test; every failure names a condition that fails for the value it names.
struct Verdicts {
  std::size_t matches = 0;
  std::size_t failures = 0;
};

Verdicts expectExplainAgrees(std::uint64_t seed, std::size_t names, std::size_t rule_count,
                             std::size_t event_count) {
  testing::Generator generator(seed, names);
  std::vector<std::shared_ptr<const Pattern>> rules;
  for (std::size_t i = 0; i < rule_count; ++i) rules.push_back(generator.rule());
  const RuleIndex index(rules);
  Verdicts verdicts;
  std::vector<std::uint32_t> matched;
  for (std::size_t e = 0; e < event_count; ++e) {
    const std::string json = generator.event();
    Result<event::Event> event = event::decode(json);
    if (!event.ok()) {
      ADD_FAILURE() << json;
      return verdicts;
    }
    matched.clear();
    index.match(*event, kNow, matched);
    for (std::uint32_t r = 0; r < rules.size(); ++r) {
      const Explanation explanation = explain(*rules[r], *event, kNow);
      const bool indexed = std::binary_search(matched.begin(), matched.end(), r);
      if (explanation.matched != indexed || explanation.failure.has_value() == indexed) {
        ADD_FAILURE() << "seed " << seed << ", rule " << rules[r]->toString() << ", event " << json
                      << ": index " << indexed << ", explain " << explanation.toString();
        return verdicts;
      }
      if (!explanation.failure) {
        ++verdicts.matches;
        continue;
      }
      ++verdicts.failures;
      const Failure& failure = *explanation.failure;
      if (failure.path.empty() || failure.field == nullptr ||
          fieldHolds(*failure.field, failure.parent, kNow)) {
        ADD_FAILURE() << "seed " << seed << ", rule " << rules[r]->toString() << ", event " << json
                      << ": the reported condition holds: " << failure.toString();
        return verdicts;
      }
    }
  }
  return verdicts;
}

TEST(ExplainDifferential, AgreesWithTheRuleIndexOnGeneratedRulesAndEvents) {
  for (const auto& [seed, names] :
       {std::pair<std::uint64_t, std::size_t>{1, 5}, {2, 5}, {3, 5}, {11, 20}}) {
    // Both sides must be exercised, not only "nothing matches".
    const Verdicts verdicts = expectExplainAgrees(seed, names, 100, 1000);
    EXPECT_GT(verdicts.matches, 500u) << "seed " << seed;
    EXPECT_GT(verdicts.failures, 10'000u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace relay::pattern
