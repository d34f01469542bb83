#include "cli/pattern_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/rfc3339.h"
#include "fakes/fake_clock.h"
#include "fakes/temp_dir.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::run;

class PatternTest : public ::testing::Test {
 protected:
  std::string pattern(const std::string& yaml) { return dir_.write("pattern.yaml", yaml).string(); }
  // What `relay pattern test` says when it refuses the pattern `file` (exit 2, nothing printed).
  std::string refusal(const std::string& file) {
    const auto result = run({"pattern", "test", "--pattern", file, "--event", "{}"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.out, "");
    return result.err;
  }

  relay::testing::TempDir dir_;
};

TEST_F(PatternTest, MatchPrintsMatchAndExitsZero) {
  const auto result =
      run({"pattern", "test", "--pattern", pattern("event_name: [INSERT]\ntable_name: [users]\n"),
           "--event", R"({"event_name":"INSERT","table_name":"users","id":7})"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, "match\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(PatternTest, NoMatchPrintsNoMatchAndExitsOne) {
  const auto result = run({"pattern", "test", "--pattern", pattern("event_name: [INSERT]\n"),
                           "--event", R"({"event_name":"DELETE"})"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "no match\n");
}

TEST_F(PatternTest, ExplainNamesTheFailingConditionAndTheEventsValue) {
  const auto result =
      run({"pattern", "test", "--explain", "--pattern", pattern("new_image: {status: [COMPLETED]}"),
           "--event", R"({"new_image":{"status":"PENDING"}})"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out,
            "no match\nnew_image.status: got \"PENDING\", wanted one of [\"COMPLETED\"]\n");
}

TEST_F(PatternTest, ExplainOfAMatchPrintsOnlyMatch) {
  const auto result = run(
      {"pattern", "test", "--explain", "--pattern", pattern("a: [1]"), "--event", R"({"a":1})"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, "match\n");
}

TEST_F(PatternTest, JsonCarriesTheExplanation) {
  const auto no = run({"pattern", "test", "--json", "--pattern", pattern("a: [1]\nb: [x]"),
                       "--event", R"({"a":1})"});
  EXPECT_EQ(no.exit_code, 1);
  const auto json = nlohmann::json::parse(no.out);
  EXPECT_EQ(json["match"], false);
  EXPECT_EQ(json["path"], "b");
  EXPECT_EQ(json["got"], "nothing (no such field)");
  EXPECT_EQ(json["wanted"], "one of [\"x\"]");
  EXPECT_EQ(json["reason"], "b: got nothing (no such field), wanted one of [\"x\"]");
  const auto yes =
      run({"pattern", "test", "--json", "--pattern", pattern("a: [1]"), "--event", R"({"a":1})"});
  EXPECT_EQ(yes.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(yes.out), nlohmann::json::parse(R"({"match":true})"));
}

TEST_F(PatternTest, EventFromFile) {
  const std::string event = dir_.write("event.json", R"({"id":"user_1"})").string();
  const auto result = run(
      {"pattern", "test", "--pattern", pattern("id: [{prefix: user_}]"), "--event", "@" + event});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "match\n");
}

TEST_F(PatternTest, InvalidPatternPrintsEveryErrorWithFileLineColumnAndPath) {
  const std::string file = pattern("status: COMPLETED\nid: [{prefx: \"x\"}]\n");
  const auto result = run({"pattern", "test", "--pattern", file, "--event", "{}"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            file +
                ":1:9: status: a field condition must be a list of alternatives, not a scalar: "
                "write status: [COMPLETED]\n" +
                file +
                ":2:7: id[0]: unknown operator \"prefx\" (did you mean prefix?); operators are "
                "prefix, suffix, exists, gt, gte, lt, lte\n");
}

TEST_F(PatternTest, EmptyPatternFileIsInvalid) {
  const std::string file = pattern("");
  const auto result = run({"pattern", "test", "--pattern", file, "--event", "{}"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("the pattern is missing or null"), std::string::npos) << result.err;
}

TEST_F(PatternTest, YamlSyntaxErrorIsReportedWithPosition) {
  const std::string file = pattern("a: [1\n");
  const auto result = run({"pattern", "test", "--pattern", file, "--event", "{}"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err.rfind(file + ":2:1: YAML syntax error: ", 0), 0u) << result.err;
}

TEST_F(PatternTest, ADuplicateKeyIsAnErrorAtItsPosition) {
  const std::string file = pattern("status: [a]\nid: [1]\nstatus: [b]\n");
  EXPECT_EQ(refusal(file), file + ":3:1: status: duplicate field \"status\"\n");
}

// An alias expands wherever it is used: ten lists of ten aliases nest to 10^8 nodes. Refused
// before anything walks it, as in a template (docs/patterns.md).
TEST_F(PatternTest, AnAliasBombIsRefusedWithAPosition) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i) {
    const std::string previous = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + previous;
    for (int j = 1; j < 10; ++j) yaml += ", " + previous;
    yaml += "]\n";
  }
  const std::string file = pattern(yaml);
  EXPECT_EQ(refusal(file),
            file +
                ":1:1: the pattern expands to more than 100000 YAML nodes (aliases?); "
                "refusing to read it\n");
}

TEST_F(PatternTest, AnAliasWithinTheBudgetIsExpandedWhereItIsUsed) {
  const std::string file = pattern("status: &either [a, b]\nkind: *either\n");
  const auto result =
      run({"pattern", "test", "--pattern", file, "--event", R"({"status":"b","kind":"a"})"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "match\n");
}

TEST_F(PatternTest, ASecondYamlDocumentIsAnError) {
  const std::string file = pattern("status: [a]\n---\nstatus: [b]\n");
  EXPECT_EQ(refusal(file), file +
                               ":3:1: a pattern file holds one YAML document; found a second one "
                               "after \"---\"\n");
}

TEST_F(PatternTest, MissingPatternFileIsAUsageError) {
  const auto result = run({"pattern", "test", "--pattern", "/nonexistent/p.yaml", "--event", "{}"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "relay pattern test: cannot read /nonexistent/p.yaml: No such file or directory\n");
}

TEST_F(PatternTest, InvalidEventJsonExitsTwoWithTheReason) {
  const auto result =
      run({"pattern", "test", "--pattern", pattern("a: [1]"), "--event", "{\"a\":"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "relay pattern test: invalid event: invalid JSON at byte 5: unexpected end of input; "
            "expected a value\n");
}

TEST_F(PatternTest, NonObjectEventExitsTwo) {
  const auto result = run({"pattern", "test", "--pattern", pattern("a: [1]"), "--event", "[1]"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "relay pattern test: invalid event: the event must be a JSON object, got an array\n");
}

TEST_F(PatternTest, NowFlagSetsTheCutoff) {
  const std::string file = pattern("t: [{gt: \"now()-5m\"}]");
  const std::string event = R"({"t":"2026-01-01T09:58:00Z"})";
  EXPECT_EQ(
      run({"pattern", "test", "--pattern", file, "--event", event, "--now", "2026-01-01T10:00:00Z"})
          .exit_code,
      0);
  EXPECT_EQ(run({"pattern", "test", "--pattern", file, "--event", event, "--now",
                 "2026-01-01T10:04:00+01:00"})
                .exit_code,
            0);
  EXPECT_EQ(
      run({"pattern", "test", "--pattern", file, "--event", event, "--now", "2026-01-01T10:10:00Z"})
          .exit_code,
      1);
}

TEST_F(PatternTest, BadNowIsAUsageError) {
  const auto result = run({"pattern", "test", "--pattern", pattern("a: [1]"), "--event", "{}",
                           "--now", "2026-01-01 10:00"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "relay pattern test: invalid --now \"2026-01-01 10:00\": expected an RFC 3339 "
            "timestamp such as 2026-01-01T10:00:00Z\n");
}

TEST_F(PatternTest, MissingFlagsAreUsageErrors) {
  EXPECT_EQ(run({"pattern", "test", "--event", "{}"}).exit_code, 2);
  EXPECT_EQ(run({"pattern", "test", "--pattern", "x.yaml"}).exit_code, 2);
  EXPECT_EQ(run({"pattern"}).exit_code, 2);
}

// --- stdin and the clock, injected -----------------------------------------------------------

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

Outcome runWith(const PatternTestOptions& options, const std::string& stdin_text,
                const Clock& clock) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  CommandContext context{out, err};
  runPatternTest(options, in, clock, context);
  return {context.exit_code, out.str(), err.str()};
}

TEST(PatternTestStdin, PatternFromStdin) {
  const relay::testing::FakeClock clock;
  const Outcome outcome = runWith({"-", R"({"a":{"b":2}})", std::nullopt}, "a:\n  b: [2]\n", clock);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "match\n");
}

TEST(PatternTestStdin, StdinErrorsAreNamedStdin) {
  const relay::testing::FakeClock clock;
  const Outcome outcome = runWith({"-", "{}", std::nullopt}, "a: []\n", clock);
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.err,
            "<stdin>:1:4: a: empty list: a field condition needs at least one alternative\n");
}

TEST(PatternTestStdin, EventFromStdin) {
  const relay::testing::FakeClock clock;
  relay::testing::TempDir dir;
  const std::string pattern = dir.write("p.yaml", "a: [1]").string();
  const Outcome outcome = runWith({pattern, "@-", std::nullopt}, R"({"a":1.0})", clock);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
}

TEST(PatternTestStdin, BothFromStdinIsAUsageError) {
  const relay::testing::FakeClock clock;
  const Outcome outcome = runWith({"-", "@-", std::nullopt}, "a: [1]", clock);
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.err, "relay pattern test: --pattern - and --event @- cannot both read stdin\n");
}

TEST(PatternTestStdin, WithoutNowTheClockGivesTheCutoff) {
  relay::testing::FakeClock clock(
      WallTime(std::chrono::seconds(1'767'261'600)));  // 2026-01-01T10:00Z
  const PatternTestOptions options{"-", R"({"t":"2026-01-01T09:58:00Z"})", std::nullopt};
  EXPECT_EQ(runWith(options, "t: [{gt: \"now()-5m\"}]", clock).exit_code, 0);
  clock.advance(std::chrono::minutes(10));
  EXPECT_EQ(runWith(options, "t: [{gt: \"now()-5m\"}]", clock).exit_code, 1);
}

}  // namespace
}  // namespace relay::cli
