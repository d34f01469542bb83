// The pattern language of docs/patterns.md, one row per rule and side (a match and a
// no-match). Every row runs through the reference evaluator, the RuleIndex and explain().
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/compiler.h"
#include "pattern/evaluator.h"
#include "pattern/explain.h"
#include "pattern/rule_index.h"

namespace relay::pattern {
namespace {

struct Case {
  const char* name;
  const char* pattern;  // YAML: the map under `pattern:`
  const char* event;    // JSON object
  bool expected;
};

// Every temporal row is evaluated at this instant.
constexpr const char* kNowText = "2026-01-01T10:00:00Z";

const Case kCases[] = {
    // --- Pattern syntax ---------------------------------------------------------------------
    {"ListIsOrFirstAlternative", "status: [COMPLETED, FAILED]", R"({"status":"COMPLETED"})", true},
    {"ListIsOrSecondAlternative", "status: [COMPLETED, FAILED]", R"({"status":"FAILED"})", true},
    {"ListIsOrNoAlternative", "status: [COMPLETED, FAILED]", R"({"status":"PENDING"})", false},
    {"BareScalarIsEquality", "status: [COMPLETED]", R"({"status":"COMPLETED"})", true},
    {"BareScalarEqualityIsCaseSensitive", "status: [COMPLETED]", R"({"status":"completed"})",
     false},
    {"OperatorMapPrefixMatches", "id: [{prefix: \"user_\"}]", R"({"id":"user_123"})", true},
    {"OperatorMapPrefixFails", "id: [{prefix: \"user_\"}]", R"({"id":"123"})", false},
    {"OperatorMapGtMatches", "score: [{gt: 70}]", R"({"score":71})", true},
    {"OperatorMapGtFails", "score: [{gt: 70}]", R"({"score":70})", false},
    {"OperatorMapExistsFalseMatchesAbsence", "deleted_at: [{exists: false}]", R"({"id":1})", true},
    {"OperatorMapExistsFalseFailsPresence", "deleted_at: [{exists: false}]",
     R"({"deleted_at":"x"})", false},
    {"NestedMapMatches", "new_image: {status: [COMPLETED]}",
     R"({"new_image":{"status":"COMPLETED"}})", true},
    {"NestedMapFailsOnChildValue", "new_image: {status: [COMPLETED]}",
     R"({"new_image":{"status":"FAILED"}})", false},
    {"NestedChildrenAreAndedAllHold", "new_image: {status: [A], kind: [B]}",
     R"({"new_image":{"status":"A","kind":"B"}})", true},
    {"NestedChildrenAreAndedOneFails", "new_image: {status: [A], kind: [B]}",
     R"({"new_image":{"status":"A","kind":"C"}})", false},
    {"BareMapEqualsOneElementListMatch", "new_image: [{status: [COMPLETED]}]",
     R"({"new_image":{"status":"COMPLETED"}})", true},
    {"BareMapEqualsOneElementListNoMatch", "new_image: [{status: [COMPLETED]}]",
     R"({"new_image":{"status":"FAILED"}})", false},
    {"AlternativeSubObjectsFirst", "result: [{ status: [OK] }, { status: [DEGRADED] }]",
     R"({"result":{"status":"OK"}})", true},
    {"AlternativeSubObjectsSecond", "result: [{ status: [OK] }, { status: [DEGRADED] }]",
     R"({"result":{"status":"DEGRADED"}})", true},
    {"AlternativeSubObjectsNone", "result: [{ status: [OK] }, { status: [DEGRADED] }]",
     R"({"result":{"status":"FAILED"}})", false},
    {"TemplateExampleMatches", "{event_name: [INSERT], table_name: [users]}",
     R"({"event_name":"INSERT","table_name":"users"})", true},
    {"TemplateExampleOtherTable", "{event_name: [INSERT], table_name: [users]}",
     R"({"event_name":"INSERT","table_name":"orgs"})", false},

    // --- Operators ----------------------------------------------------------------------------
    {"PrefixMatchesStringStart", "id: [{prefix: \"12\"}]", R"({"id":"123"})", true},
    {"PrefixNeverMatchesNumbers", "id: [{prefix: \"12\"}]", R"({"id":123})", false},
    {"PrefixNeverMatchesBooleans", "flag: [{prefix: \"t\"}]", R"({"flag":true})", false},
    {"PrefixOfWholeStringMatches", "id: [{prefix: \"abc\"}]", R"({"id":"abc"})", true},
    {"PrefixLongerThanValueFails", "id: [{prefix: \"abcd\"}]", R"({"id":"abc"})", false},
    {"EmptyPrefixMatchesAnyString", "id: [{prefix: \"\"}]", R"({"id":"x"})", true},
    {"EmptyPrefixFailsNonString", "id: [{prefix: \"\"}]", R"({"id":null})", false},
    {"SuffixMatchesStringEnd", "name: [{suffix: ville}]", R"({"name":"Louisville"})", true},
    {"SuffixFailsElsewhere", "name: [{suffix: ville}]", R"({"name":"Villeneuve"})", false},
    {"SuffixNeverMatchesNumbers", "n: [{suffix: \"5\"}]", R"({"n":15})", false},
    {"ExistsTrueMatchesNull", "k: [{exists: true}]", R"({"k":null})", true},
    {"ExistsTrueMatchesFalse", "k: [{exists: true}]", R"({"k":false})", true},
    {"ExistsTrueMatchesZero", "k: [{exists: true}]", R"({"k":0})", true},
    {"ExistsTrueMatchesEmptyString", "k: [{exists: true}]", R"({"k":""})", true},
    {"ExistsTrueMatchesEmptyObject", "k: [{exists: true}]", R"({"k":{}})", true},
    {"ExistsTrueMatchesEmptyArray", "k: [{exists: true}]", R"({"k":[]})", true},
    {"ExistsTrueFailsAbsence", "k: [{exists: true}]", R"({"j":1})", false},
    {"ExistsFalseFailsNull", "k: [{exists: false}]", R"({"k":null})", false},
    {"ExistsFalseFailsEmptyArray", "k: [{exists: false}]", R"({"k":[]})", false},
    {"GtAboveMatches", "n: [{gt: 70}]", R"({"n":70.5})", true},
    {"GtEqualFails", "n: [{gt: 70}]", R"({"n":70})", false},
    {"GteEqualMatches", "n: [{gte: 70}]", R"({"n":70})", true},
    {"GteBelowFails", "n: [{gte: 70}]", R"({"n":69.99})", false},
    {"LtBelowMatches", "n: [{lt: 10}]", R"({"n":9})", true},
    {"LtEqualFails", "n: [{lt: 10}]", R"({"n":10})", false},
    {"LteEqualMatches", "n: [{lte: 10}]", R"({"n":10})", true},
    {"LteAboveFails", "n: [{lte: 10}]", R"({"n":10.001})", false},
    {"ThresholdNegativeNumbers", "n: [{lt: -40}]", R"({"n":-41.5})", true},
    {"ThresholdNeverMatchesNumericStrings", "n: [{gt: 70}]", R"({"n":"80"})", false},
    {"ThresholdNeverMatchesBooleans", "n: [{gt: 0}]", R"({"n":true})", false},
    {"ThresholdFailsMissingField", "n: [{lt: 10}]", R"({})", false},
    {"SeveralPrefixesAreAlternatives", "id: [{prefix: \"user_\"}, {prefix: \"org_\"}]",
     R"({"id":"org_7"})", true},
    {"SeveralPrefixesNoneMatches", "id: [{prefix: \"user_\"}, {prefix: \"org_\"}]",
     R"({"id":"team_7"})", false},
    {"SeveralThresholdsLowSide", "amount: [{lt: 10}, {gte: 1000}]", R"({"amount":5})", true},
    {"SeveralThresholdsHighSide", "amount: [{lt: 10}, {gte: 1000}]", R"({"amount":1000})", true},
    {"SeveralThresholdsAreNotARange", "amount: [{lt: 10}, {gte: 1000}]", R"({"amount":500})",
     false},

    // --- Comparison operators: now()-relative cut-offs (now = 2026-01-01T10:00:00Z) --------
    {"NowMinusFiveMinutesRecentMatches", "created_at: [{gt: \"now()-5m\"}]",
     R"({"created_at":"2026-01-01T09:59:00Z"})", true},
    {"NowMinusFiveMinutesOldFails", "created_at: [{gt: \"now()-5m\"}]",
     R"({"created_at":"2026-01-01T09:50:00Z"})", false},
    {"NowMinusFiveMinutesAtCutoffFailsGt", "created_at: [{gt: \"now()-5m\"}]",
     R"({"created_at":"2026-01-01T09:55:00Z"})", false},
    {"NowMinusFiveMinutesAtCutoffMatchesGte", "created_at: [{gte: \"now()-5m\"}]",
     R"({"created_at":"2026-01-01T09:55:00Z"})", true},
    {"NowAloneLtPastMatches", "t: [{lt: \"now()\"}]", R"({"t":"2026-01-01T09:59:59Z"})", true},
    {"NowAloneLtFutureFails", "t: [{lt: \"now()\"}]", R"({"t":"2026-01-01T10:00:01Z"})", false},
    {"NowPlusTenMinutesMatches", "t: [{lte: \"now()+10m\"}]", R"({"t":"2026-01-01T10:10:00Z"})",
     true},
    {"NowPlusTenMinutesFails", "t: [{lte: \"now()+10m\"}]", R"({"t":"2026-01-01T10:10:01Z"})",
     false},
    {"CompoundOffsetMatches", "t: [{gt: \"now()-1h30m\"}]", R"({"t":"2026-01-01T08:31:00Z"})",
     true},
    {"CompoundOffsetFails", "t: [{gt: \"now()-1h30m\"}]", R"({"t":"2026-01-01T08:29:00Z"})", false},
    {"MillisecondOffsetIsExact", "t: [{gt: \"now()-1s500ms\"}]",
     R"({"t":"2026-01-01T09:59:58.501Z"})", true},
    {"MillisecondOffsetAtCutoffFails", "t: [{gt: \"now()-1s500ms\"}]",
     R"({"t":"2026-01-01T09:59:58.500Z"})", false},
    {"OffsetsAreComparedAsInstantsNotText", "t: [{gt: \"now()-1h\"}]",
     R"({"t":"2026-01-01T10:30:00+02:00"})", false},
    {"PositiveOffsetIsRespected", "t: [{gt: \"now()-1h\"}]", R"({"t":"2026-01-01T11:30:00+02:00"})",
     true},
    {"NegativeOffsetIsRespected", "t: [{lt: \"now()\"}]", R"({"t":"2026-01-01T05:30:00-05:00"})",
     false},
    {"LowercaseTAndZAreAccepted", "t: [{gt: \"now()-1h\"}]", R"({"t":"2026-01-01t09:30:00z"})",
     true},
    {"FractionalSecondsAreAccepted", "t: [{gt: \"now()-1h\"}]",
     R"({"t":"2026-01-01T09:30:00.123456789Z"})", true},
    {"TemporalFailsMissingValue", "t: [{gt: \"now()-1h\"}]", R"({"u":"2026-01-01T09:30:00Z"})",
     false},
    {"TemporalFailsNull", "t: [{lt: \"now()\"}]", R"({"t":null})", false},
    {"TemporalFailsNumber", "t: [{lt: \"now()\"}]", R"({"t":1767225600})", false},
    {"TemporalFailsWithoutOffset", "t: [{lt: \"now()\"}]", R"({"t":"2025-01-01T09:30:00"})", false},
    {"TemporalFailsDateAlone", "t: [{lt: \"now()\"}]", R"({"t":"2025-01-01"})", false},
    {"TemporalFailsLeapSecond", "t: [{lt: \"now()\"}]", R"({"t":"2016-12-31T23:59:60Z"})", false},
    {"TemporalFailsGarbage", "t: [{lt: \"now()\"}]", R"({"t":"yesterday"})", false},
    {"TemporalAlternativesAreNotARangeFuture", "t: [{gte: \"now()-1h\"}, {lt: \"now()\"}]",
     R"({"t":"2027-06-01T00:00:00Z"})", true},
    {"TemporalAlternativesAreNotARangePast", "t: [{gte: \"now()-1h\"}, {lt: \"now()\"}]",
     R"({"t":"2001-06-01T00:00:00Z"})", true},
    {"NumericThresholdIgnoresTimestamps", "t: [{gt: 5}]", R"({"t":"2026-01-01T09:30:00Z"})", false},
    {"NestedTemporalExample", "new_image: {created_at: [{gt: \"now()-5m\"}]}",
     R"({"new_image":{"created_at":"2026-01-01T09:58:00Z"}})", true},

    // --- exists, recursively ----------------------------------------------------------------
    {"ExistsOnTopLevelKeyChecksThatKey", "new_image: [{exists: true}]", R"({"new_image":null})",
     true},
    {"ExistsInsideNestedMapChecksChild", "new_image: {name: [{exists: true}]}",
     R"({"new_image":{"name":null}})", true},
    {"NestedExistsTrueFailsWithoutChild", "new_image: {name: [{exists: true}]}",
     R"({"new_image":{"other":1}})", false},
    {"NestedExistsTrueFailsWithoutParent", "new_image: {name: [{exists: true}]}",
     R"({"old_image":{"name":1}})", false},
    {"NestedExistsFalseMatchesAbsentChild", "new_image: {name: [{exists: false}]}",
     R"({"new_image":{"other":1}})", true},
    {"NestedExistsFalseMatchesAbsentParent", "new_image: {name: [{exists: false}]}",
     R"({"old_image":{"name":1}})", true},
    {"NestedExistsFalseFailsPresentChild", "new_image: {name: [{exists: false}]}",
     R"({"new_image":{"name":1}})", false},
    {"DeepExistsFalseMatchesMissingGrandparent", "a: {b: {c: [{exists: false}]}}", R"({})", true},
    {"DeepExistsTrueFailsMissingGrandparent", "a: {b: {c: [{exists: true}]}}", R"({})", false},

    // --- Combining conditions ----------------------------------------------------------------
    {"SiblingsAreAndedAllHold", "{a: [1], b: [2]}", R"({"a":1,"b":2})", true},
    {"SiblingsAreAndedOneFails", "{a: [1], b: [2]}", R"({"a":1,"b":3})", false},
    {"MissingFieldFailsValueCondition", "{a: [1], b: [2]}", R"({"a":1})", false},
    {"MissingFieldFailsNestedValueCondition", "a: {b: [1]}", R"({"c":{"b":1}})", false},
    {"ExistsFalseCanMatchAbsenceNextToValues", "{a: [1], b: [{exists: false}]}", R"({"a":1})",
     true},
    {"ExtraFieldsAreIgnored", "a: [1]", R"({"a":1,"b":2,"c":{"d":[3]}})", true},
    {"ExtraNestedFieldsAreIgnored", "a: {b: [1]}", R"({"a":{"b":1,"z":0}})", true},
    {"UserPrefixExampleMatches", "id: [{prefix: \"user_\"}]", R"({"id":"user_123"})", true},
    {"UserPrefixExampleFails", "id: [{prefix: \"user_\"}]", R"({"id":"123"})", false},

    // --- docs/patterns.md "Scalars: YAML types" --------------------------------------------------
    {"PlainNumberEqualsJsonNumber", "n: [123]", R"({"n":123})", true},
    {"PlainNumberNeverEqualsString", "n: [123]", R"({"n":"123"})", false},
    {"QuotedNumberEqualsString", "n: ['123']", R"({"n":"123"})", true},
    {"QuotedNumberNeverEqualsNumber", "n: ['123']", R"({"n":123})", false},
    {"PlainNegativeFloat", "n: [-1.5]", R"({"n":-1.5})", true},
    {"PlainTrueEqualsJsonTrue", "b: [true]", R"({"b":true})", true},
    {"PlainTrueNeverEqualsString", "b: [true]", R"({"b":"true"})", false},
    {"QuotedTrueNeverEqualsBoolean", "b: ['true']", R"({"b":true})", false},
    {"PlainFalseEqualsJsonFalse", "b: [false]", R"({"b":false})", true},
    {"PlainFalseNeverEqualsZero", "b: [false]", R"({"b":0})", false},
    {"PlainNullEqualsJsonNull", "v: [null]", R"({"v":null})", true},
    {"PlainNullNeverMatchesAbsence", "v: [null]", R"({})", false},
    {"PlainNullNeverEqualsString", "v: [null]", R"({"v":"null"})", false},
    {"IntegerEqualsSameFloat", "n: [1]", R"({"n":1.0})", true},
    {"FloatEqualsSameInteger", "n: [1.0]", R"({"n":1})", true},
    {"ExponentEqualsSameInteger", "n: [100]", R"({"n":1e2})", true},
    {"NumbersCompareByValue", "n: [1]", R"({"n":1.5})", false},
    {"StringNeverEqualsNumber", "n: ['1']", R"({"n":1})", false},
    {"StringNeverEqualsBoolean", "b: ['false']", R"({"b":false})", false},
    {"IntegersBeyond2Pow53CompareAsDoubles", "n: [9007199254740993]", R"({"n":9007199254740992})",
     true},
    {"HugeIntegerParsesAndCompares", "n: [{gt: 1e29}]", R"({"n":123456789012345678901234567890})",
     true},
    {"OverflowingNumberIsInfinite", "n: [{gt: 1e308}]", R"({"n":1e400})", true},
    {"NegativeOverflowIsMinusInfinite", "n: [{lt: -1e308}]", R"({"n":-1e400})", true},
    {"UnderflowingNumberIsZero", "n: [0]", R"({"n":1e-400})", true},
    {"NegativeZeroEqualsZero", "n: [0]", R"({"n":-0.0})", true},
    {"EscapedStringsCompareUnescaped", "name: [\"Sant Julià de Lòria\"]",
     R"({"name":"Sant Juli\u00e0 de L\u00f2ria"})", true},
    {"EscapedKeysCompareUnescaped", "\"a\\\"b\": [1]", R"({"a\"b":1})", true},

    // --- docs/patterns.md "Arrays in events" -----------------------------------------------------
    {"ArrayMatchesWhenAnyElementEquals", "tags: [a]", R"({"tags":["b","a"]})", true},
    {"ArrayFailsWhenNoElementEquals", "tags: [a]", R"({"tags":["b","c"]})", false},
    {"EmptyArrayFailsValueConditions", "tags: [a]", R"({"tags":[]})", false},
    {"NestedArraysAreSearched", "tags: [a]", R"({"tags":[["b"],["a"]]})", true},
    {"ArrayAnyElementPrefix", "tags: [{prefix: x}]", R"({"tags":[1,"xy"]})", true},
    {"ArrayAnyElementThreshold", "n: [{gt: 10}]", R"({"n":[1,2,30]})", true},
    {"ArrayNoElementThreshold", "n: [{gt: 10}]", R"({"n":[1,2,3]})", false},
    {"ArrayNestedMapOneElementSatisfiesAll", "items: {sku: [A], qty: [2]}",
     R"({"items":[{"sku":"B","qty":1},{"sku":"A","qty":2}]})", true},
    {"ArrayNestedMapNeverMixesElements", "items: {sku: [A], qty: [2]}",
     R"({"items":[{"sku":"A","qty":1},{"sku":"B","qty":2}]})", false},
    {"ArrayNestedAlternativesEachOnOneElement", "items: [{sku: [A]}, {qty: [2]}]",
     R"({"items":[{"sku":"B","qty":2}]})", true},
    {"ArrayOfObjectsDeepPath", "a: {b: {c: [1]}}", R"({"a":[{"b":[{"c":0},{"c":[5,1]}]}]})", true},
    {"ArrayExistsLooksAtKeyOnly", "tags: [{exists: true}]", R"({"tags":[]})", true},
    {"ArrayExistsFalseFailsOnEmptyArray", "tags: [{exists: false}]", R"({"tags":[]})", false},
    {"ArrayNestedExistsFalseNeedsOneElementWithoutIt", "items: {sku: [{exists: false}]}",
     R"({"items":[{"sku":1},{"qty":2}]})", true},
    {"ArrayNestedExistsTrueNeedsOneElementWithIt", "items: {sku: [{exists: true}]}",
     R"({"items":[{"qty":1},{"sku":null}]})", true},
    {"ArrayNestedExistsTrueFailsWhenNoElementHasIt", "items: {sku: [{exists: true}]}",
     R"({"items":[{"qty":1},{"qty":2}]})", false},

    // --- docs/patterns.md "Structure": a nested map against a non-object value -------------------
    {"NestedMapOnStringChildExistsFalseHolds", "a: {b: [{exists: false}]}", R"({"a":"text"})",
     true},
    {"NestedMapOnStringChildValueFails", "a: {b: [x]}", R"({"a":"text"})", false},
    {"NestedMapOnNumberChildValueFails", "a: {b: [1]}", R"({"a":1})", false},
    {"NestedMapOnNullChildExistsFalseHolds", "a: {b: [{exists: false}]}", R"({"a":null})", true},
    {"NestedMapOnNullChildExistsTrueFails", "a: {b: [{exists: true}]}", R"({"a":null})", false},
    // An event with a repeated key never reaches matching: event::decode() rejects it
    // (Decoder.RejectsARepeatedKey...).
};

std::shared_ptr<const Pattern> compileOrDie(const std::string& yaml) {
  CompileResult result = compile(YAML::Load(yaml));
  if (auto* errors = std::get_if<std::vector<CompileError>>(&result)) {
    ADD_FAILURE() << yaml << ": " << errors->front().path << ": " << errors->front().message;
    return nullptr;
  }
  return std::get<std::shared_ptr<const Pattern>>(result);
}

class Conformance : public ::testing::TestWithParam<Case> {};

TEST_P(Conformance, ReferenceEvaluatorIndexAndExplainAgreeWithTheSpec) {
  const Case& c = GetParam();
  const Instant now = *parseRfc3339(kNowText);
  const std::shared_ptr<const Pattern> pattern = compileOrDie(c.pattern);
  ASSERT_NE(pattern, nullptr);
  Result<event::Event> event = event::decode(c.event);
  ASSERT_TRUE(event.ok()) << event.error().message;
  EXPECT_EQ(matches(*pattern, *event, now), c.expected) << c.pattern << " vs " << c.event;
  const Explanation why = explain(*pattern, *event, now);
  EXPECT_EQ(why.matched, c.expected) << c.pattern << " vs " << c.event << ": " << why.toString();

  // Alone in an index, and between two rules that never match.
  const std::shared_ptr<const Pattern> decoy = compileOrDie("__never__: [{exists: true}]");
  const RuleIndex index({decoy, pattern, decoy});
  std::vector<std::uint32_t> matched;
  index.match(*event, now, matched);
  EXPECT_EQ(matched, c.expected ? std::vector<std::uint32_t>{1} : std::vector<std::uint32_t>{})
      << c.pattern << " vs " << c.event;
}

INSTANTIATE_TEST_SUITE_P(EventsMd, Conformance, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
}  // namespace relay::pattern
