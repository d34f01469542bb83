#include "pattern/compiler.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "pattern/pattern.h"

namespace relay::pattern {
namespace {

CompileResult compileYaml(const std::string& yaml) { return compile(YAML::Load(yaml)); }

// The compiled pattern rendered canonically, or "ERROR: <first message>".
std::string rendered(const std::string& yaml) {
  CompileResult result = compileYaml(yaml);
  if (const auto* errors = std::get_if<std::vector<CompileError>>(&result)) {
    return "ERROR: " + (errors->empty() ? std::string("?") : errors->front().message);
  }
  return std::get<std::shared_ptr<const Pattern>>(result)->toString();
}

std::vector<CompileError> errorsOf(const std::string& yaml) {
  CompileResult result = compileYaml(yaml);
  if (const auto* errors = std::get_if<std::vector<CompileError>>(&result)) return *errors;
  ADD_FAILURE() << "compiled, expected errors: " << yaml;
  return {};
}

// The only error of `yaml`, formatted "path@line:col: message".
std::string onlyError(const std::string& yaml) {
  const std::vector<CompileError> errors = errorsOf(yaml);
  if (errors.size() != 1) {
    std::string all;
    for (const CompileError& e : errors) all += "\n  " + e.path + ": " + e.message;
    ADD_FAILURE() << errors.size() << " errors for " << yaml << all;
    if (errors.empty()) return "";
  }
  const CompileError& e = errors.front();
  return e.path + "@" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message;
}

// --- accepted forms -------------------------------------------------------------------------

TEST(Compiler, CompilesListsOfScalarAlternatives) {
  EXPECT_EQ(rendered("event_name: [INSERT]\ntable_name: [users, orgs]"),
            R"y({"event_name": ["INSERT"], "table_name": ["users", "orgs"]})y");
}

TEST(Compiler, BareMapIsShorthandForOneElementList) {
  EXPECT_EQ(rendered("new_image: {status: [COMPLETED]}"),
            rendered("new_image: [{status: [COMPLETED]}]"));
  EXPECT_EQ(rendered("new_image: {status: [COMPLETED]}"),
            R"y({"new_image": [{"status": ["COMPLETED"]}]})y");
}

TEST(Compiler, BareOperatorMapIsShorthandForOneElementList) {
  EXPECT_EQ(rendered("id: {prefix: user_}"), R"y({"id": [{prefix: "user_"}]})y");
}

TEST(Compiler, ListElementsMayBeNestedMaps) {
  EXPECT_EQ(rendered("result: [{ status: [OK] }, { status: [DEGRADED] }]"),
            R"y({"result": [{"status": ["OK"]}, {"status": ["DEGRADED"]}]})y");
}

TEST(Compiler, CompilesEveryOperator) {
  EXPECT_EQ(rendered(R"y(
id: [{prefix: "user_"}, {suffix: "_x"}]
deleted_at: [{exists: false}]
amount: [{lt: 10}, {gte: 1000}, {gt: -1.5}, {lte: 0}]
created_at: [{gt: "now()-5m"}, {lt: "now()"}, {gte: "now()+10m"}, {lte: "now()-1h30m"}]
)y"),
            R"y({"id": [{prefix: "user_"}, {suffix: "_x"}], "deleted_at": [{exists: false}], )y"
            R"y("amount": [{lt: 10}, {gte: 1000}, {gt: -1.5}, {lte: 0}], )y"
            R"y("created_at": [{gt: "now()-5m"}, {lt: "now()"}, {gte: "now()+10m"}, )y"
            R"y({lte: "now()-1h30m"}]})y");
}

TEST(Compiler, TemporalOffsetsAcceptSecondsAndMilliseconds) {
  EXPECT_EQ(rendered(R"y(t: [{gt: "now()-1h2m3s4ms"}])y"), R"y({"t": [{gt: "now()-1h2m3s4ms"}]})y");
}

TEST(Compiler, PlainScalarsAreTypedAndQuotedOnesAreStrings) {
  EXPECT_EQ(rendered("a: [123, -1.5, true, false, null, '123', \"true\", 'null', yes]"),
            R"y({"a": [123, -1.5, true, false, null, "123", "true", "null", "yes"]})y");
}

TEST(Compiler, TypesFollowTheYamlCoreSchema) {
  EXPECT_EQ(rendered("a: [True, FALSE, ~, Null, 1e3, +5, .5, 0x1F, 0o17, 1_000, 12abc]"),
            R"y({"a": [true, false, null, null, 1000, 5, 0.5, 31, 15, "1_000", "12abc"]})y");
}

TEST(Compiler, SignedNanIsAStringAsInTemplates) {
  EXPECT_EQ(rendered("a: [-.nan, +.nan]"), R"y({"a": ["-.nan", "+.nan"]})y");
}

TEST(Compiler, BlockScalarsAndStrTagsAreStrings) {
  EXPECT_EQ(rendered("a:\n  - !!str 5\n  - |-\n    12"), R"y({"a": ["5", "12"]})y");
}

TEST(Compiler, NumbersAreNormalisedSoOneEqualsOnePointZero) {
  EXPECT_EQ(rendered("a: [1.0, -0]"), R"y({"a": [1, 0]})y");
}

TEST(Compiler, PrefixAcceptsAQuotedNumber) {
  EXPECT_EQ(rendered("zip: [{prefix: '12'}]"), R"y({"zip": [{prefix: "12"}]})y");
}

TEST(Compiler, RenderedPatternCompilesBackToItself) {
  const std::string text = rendered(
      "a: {b: [{prefix: x}, 1, null]}\nc: [{gt: 'now()-25h'}, {exists: true}, {suffix: "
      "\"q\\\"\"}]");
  EXPECT_EQ(rendered(text), text);
}

// --- rejections: each one with its path, position and message -------------------------------

TEST(Compiler, RejectsScalarAsWholeCondition) {
  EXPECT_EQ(onlyError("status: COMPLETED"),
            "status@1:9: a field condition must be a list of alternatives, not a scalar: write "
            "status: [COMPLETED]");
}

TEST(Compiler, RejectsScalarAsNestedCondition) {
  EXPECT_EQ(onlyError("new_image:\n  status: COMPLETED"),
            "new_image.status@2:11: a field condition must be a list of alternatives, not a "
            "scalar: write status: [COMPLETED]");
}

TEST(Compiler, RejectsEmptyList) {
  EXPECT_EQ(onlyError("status: []"),
            "status@1:9: empty list: a field condition needs at least one alternative");
}

TEST(Compiler, RejectsEmptyMapCondition) {
  EXPECT_EQ(onlyError("new_image: {}"),
            "new_image@1:12: empty map: a nested map needs at least one field condition");
}

TEST(Compiler, RejectsEmptyMapAlternative) {
  EXPECT_EQ(onlyError("result: [{status: [OK]}, {}]"),
            "result[1]@1:26: empty map: a nested map needs at least one field condition");
}

TEST(Compiler, RejectsNullCondition) {
  EXPECT_EQ(onlyError("a: [x]\nstatus:\nb: [y]"),
            "status@2:1: the condition of \"status\" is null; write a list of alternatives: "
            "status: [value]");
  EXPECT_EQ(onlyError("status: ~"),
            "status@1:1: the condition of \"status\" is null; write a list of alternatives: "
            "status: [value]");
}

TEST(Compiler, RejectsOperatorAsTopLevelFieldName) {
  EXPECT_EQ(onlyError("exists: [true]"),
            "exists@1:1: \"exists\" is an operator and cannot be used as a field name; an "
            "operator is a one-key map inside a field's list: field: [{exists: ...}]");
}

TEST(Compiler, RejectsOperatorAsNestedFieldName) {
  EXPECT_EQ(onlyError("new_image:\n  prefix: [abc]"),
            "new_image@2:11: prefix takes a single string, not a list; several operands are "
            "separate alternatives (operator names cannot be used as field names)");
}

TEST(Compiler, RejectsOperatorNextToANestedField) {
  EXPECT_EQ(onlyError("new_image: [{prefix: a, status: [OK]}]"),
            "new_image[0]@1:13: operator \"prefix\" cannot share a map with field \"status\"; an "
            "operator map holds exactly one operator");
}

TEST(Compiler, RejectsMisspelledOperator) {
  EXPECT_EQ(onlyError("id: [{prefx: \"x\"}]"),
            "id[0]@1:7: unknown operator \"prefx\" (did you mean prefix?); operators are prefix, "
            "suffix, exists, gt, gte, lt, lte");
}

TEST(Compiler, RejectsOperatorWithWrongCase) {
  EXPECT_EQ(onlyError("id: {Prefix: x}"),
            "id@1:6: unknown operator \"Prefix\" (did you mean prefix?); operators are prefix, "
            "suffix, exists, gt, gte, lt, lte");
}

TEST(Compiler, RejectsOperatorsOfOtherLanguages) {
  EXPECT_EQ(onlyError("id: [{equals: x}]"),
            "id[0]@1:7: unknown operator \"equals\" (there is no equals operator: a bare literal "
            "is equality); operators are prefix, suffix, exists, gt, gte, lt, lte");
  EXPECT_EQ(onlyError("id: [{anything-but: x}]"),
            "id[0]@1:7: unknown operator \"anything-but\" (there is no negation operator); "
            "operators are prefix, suffix, exists, gt, gte, lt, lte");
}

TEST(Compiler, UnknownKeyWithScalarValueIsNeverANestedField) {
  EXPECT_EQ(onlyError("id: [{colour: red}]"),
            "id[0].colour@1:15: a field condition must be a list of alternatives, not a scalar: "
            "write colour: [red]");
}

TEST(Compiler, RejectsPrefixWithANumber) {
  EXPECT_EQ(onlyError("id: [{prefix: 12}]"),
            "id[0]@1:15: prefix takes a string, got number 12; quote it to match text: \"12\"");
}

TEST(Compiler, RejectsSuffixWithNull) {
  EXPECT_EQ(onlyError("id: [{suffix: null}]"), "id[0]@1:7: suffix takes a string, got null");
}

TEST(Compiler, RejectsExistsWithAList) {
  EXPECT_EQ(onlyError("deleted_at: [{exists: [true]}]"),
            "deleted_at[0]@1:23: exists takes a single true or false, not a list; several "
            "operands are separate alternatives (operator names cannot be used as field names)");
}

TEST(Compiler, RejectsExistsWithAQuotedBoolean) {
  EXPECT_EQ(onlyError("deleted_at: [{exists: 'true'}]"),
            "deleted_at[0]@1:23: exists takes true or false (unquoted), got string \"true\"");
}

TEST(Compiler, RejectsThresholdWithText) {
  EXPECT_EQ(onlyError("score: [{gt: \"abc\"}]"),
            "score[0]@1:14: gt: invalid temporal operand \"abc\"; expected now(), now()-5m, "
            "now()+10m or a compound offset like now()-1h30m (units h, m, s, ms; no spaces)");
}

TEST(Compiler, RejectsThresholdWithAQuotedNumber) {
  EXPECT_EQ(onlyError("score: [{gte: '70'}]"),
            "score[0]@1:15: gte takes a number unquoted: write gte: 70 (a quoted operand must be "
            "a now()-relative string)");
}

TEST(Compiler, RejectsThresholdWithABoolean) {
  EXPECT_EQ(onlyError("score: [{lt: true}]"),
            "score[0]@1:14: lt takes a number or a now()-relative string such as \"now()-5m\", "
            "got boolean true");
}

TEST(Compiler, RejectsTwoOperatorsInOneMap) {
  EXPECT_EQ(onlyError("amount: [{gte: 1, lt: 10}]"),
            "amount[0]@1:10: only one operator per map, found \"gte\" and \"lt\"; write them as "
            "separate alternatives (a list is OR)");
}

TEST(Compiler, RejectsLiteralTimestamp) {
  EXPECT_EQ(onlyError("created_at: [{gt: \"2026-09-12T10:00:00Z\"}]"),
            "created_at[0]@1:19: gt: invalid temporal operand \"2026-09-12T10:00:00Z\": a "
            "literal timestamp is not accepted, only a cut-off relative to now(); expected "
            "now(), now()-5m, now()+10m or a compound offset like now()-1h30m (units h, m, s, "
            "ms; no spaces)");
  EXPECT_NE(onlyError("created_at: [{gt: \"2026-09-12\"}]").find("literal timestamp"),
            std::string::npos);
}

TEST(Compiler, RejectsBareNowForms) {
  for (const char* operand : {"now", "now-5m", "NOW()", "Now()-5m"}) {
    EXPECT_NE(onlyError("t: [{gt: \"" + std::string(operand) + "\"}]")
                  .find("write now() exactly, with parentheses"),
              std::string::npos)
        << operand;
  }
}

TEST(Compiler, RejectsSpacesInNowExpression) {
  EXPECT_NE(onlyError("t: [{gt: \"now() - 5m\"}]").find(": no spaces allowed;"), std::string::npos);
  EXPECT_NE(onlyError("t: [{gt: \"now()-5 m\"}]").find(": no spaces allowed;"), std::string::npos);
}

TEST(Compiler, RejectsBadNowOffsets) {
  for (const char* operand : {"now()-", "now()-5", "now()-0", "now()-1d", "now()-5x", "now()*5m",
                              "now()-30m1h", "now()-1.5h", "now()--5m"}) {
    EXPECT_NE(
        onlyError("t: [{lt: \"" + std::string(operand) + "\"}]").find("invalid temporal operand"),
        std::string::npos)
        << operand;
  }
}

TEST(Compiler, RejectsNonFiniteAndOutOfRangeNumbers) {
  EXPECT_EQ(onlyError("a: [.inf]"),
            "a[0]@1:5: number .inf is not finite; only finite numbers are supported");
  EXPECT_EQ(onlyError("a: [{gt: 1e400}]"), "a[0]@1:10: number 1e400 is out of range of a double");
  EXPECT_EQ(onlyError("a: [0x1FFFFFFFFFFFFFFFFF]"),
            "a[0]@1:5: number 0x1FFFFFFFFFFFFFFFFF is out of range (at most 64 bits)");
}

TEST(Compiler, RejectsUnsupportedTags) {
  EXPECT_EQ(onlyError("a: [!custom x]"),
            "a[0]@1:5: unsupported YAML tag \"!custom\"; write plain or quoted scalars (quoted "
            "ones are strings)");
}

TEST(Compiler, RejectsInvalidUtf8InStringsAndFieldNames) {
  EXPECT_EQ(onlyError("a: [\"\xff\"]"),
            "a[0]@1:5: the scalar is not valid UTF-8, so no event could ever equal it");
  EXPECT_EQ(onlyError("\"\xc3\": [1]"),
            "@1:1: a field name must be valid UTF-8, as every event key is");
}

TEST(Compiler, RenderingEscapesControlCharacters) {
  const std::string text = rendered("\"a\\tb\": [\"x\\0y\\u007f\"]");
  EXPECT_EQ(text, R"y({"a\tb": ["x\u0000y\u007f"]})y");
  EXPECT_EQ(rendered(text), text);
}

TEST(Compiler, RejectsNestingDeeperThanAnyEvent) {
  std::string deep64 = "[1]", deep65;
  for (int i = 0; i < 63; ++i) deep64 = "{a: " + deep64 + "}";
  deep65 = "{a: " + deep64 + "}";
  EXPECT_TRUE(std::holds_alternative<std::shared_ptr<const Pattern>>(compileYaml("a: " + deep64)));
  const std::vector<CompileError> errors = errorsOf("a: " + deep65);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "nested deeper than 64 levels, which no event can be (events nest at most that deep)");
  EXPECT_EQ(errors[0].path.size(), 2u * 64 - 1);  // a.a.a...: 64 names
}

TEST(Compiler, RejectsListInsideList) {
  EXPECT_EQ(onlyError("a: [[1]]"),
            "a[0]@1:5: a list inside a list is not an alternative; an alternative is a scalar, "
            "a one-operator map or a map of nested fields");
}

TEST(Compiler, RejectsDuplicateFields) {
  EXPECT_EQ(onlyError("a: [1]\na: [2]"), "a@2:1: duplicate field \"a\"");
}

TEST(Compiler, RejectsNonStringFieldNames) {
  EXPECT_EQ(onlyError("? [a]\n: [1]"), "@1:3: a field name must be a string, not a list");
}

TEST(Compiler, RejectsEmptyOrNonMapPattern) {
  EXPECT_EQ(onlyError("{}"), "@1:1: the pattern is empty; it needs at least one field condition");
  EXPECT_EQ(onlyError("[a]"), "@1:1: the pattern must be a map of field conditions, not a list");
  EXPECT_EQ(onlyError("abc"), "@1:1: the pattern must be a map of field conditions, not a scalar");
  EXPECT_EQ(onlyError("~"),
            "@1:1: the pattern is missing or null; it must be a map of field conditions");
}

TEST(Compiler, RejectsUndefinedNodeWithoutThrowing) {
  const YAML::Node map = YAML::Load("a: 1");
  EXPECT_EQ(std::get<std::vector<CompileError>>(compile(map["missing"])).size(), 1u);
}

TEST(Compiler, NamesDeepPathsThroughListsAndNestedMaps) {
  EXPECT_EQ(onlyError("new_image:\n  created_at:\n    - gt: \"now()-5m\"\n    - gt: 2026-01-01"),
            "new_image.created_at[1]@4:11: gt: invalid temporal operand \"2026-01-01\": a literal "
            "timestamp is not accepted, only a cut-off relative to now(); expected now(), "
            "now()-5m, now()+10m or a compound offset like now()-1h30m (units h, m, s, ms; no "
            "spaces)");
  EXPECT_EQ(onlyError("result: [{ status: [OK] }, { status: [] }]").substr(0, 22),
            "result[1].status@1:38:");
}

TEST(Compiler, ReportsEveryErrorNotOnlyTheFirst) {
  const std::vector<CompileError> errors =
      errorsOf("a: x\nb: []\nc: [{prefix: 1}, {gt: now}]\nd: {e: {}}\nf: [ok]");
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0].path, "a");
  EXPECT_EQ(errors[1].path, "b");
  EXPECT_EQ(errors[2].path, "c[0]");
  EXPECT_EQ(errors[3].path, "c[1]");
  EXPECT_EQ(errors[4].path, "d.e");
  EXPECT_EQ(errors[4].line, 4);
  EXPECT_EQ(errors[4].column, 8);
}

}  // namespace
}  // namespace relay::pattern
