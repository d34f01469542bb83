// The app's `archive:` in template.yaml (docs/replay.md "Archive"): retention required and
// bounded, the pattern optional (without it the rules decide), every error at file:LINE:COL.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/app_loader.h"
#include "app_test_util.h"

namespace relay::app {
namespace {

using testing::AppsRoot;
using testing::at;
using testing::errorStrings;

class ArchiveTemplate : public ::testing::Test {
 protected:
  LoadResult load(const std::string& archive, bool with_rules = true) {
    root_.writeFile("demo", "bin/h.sh", "#!/bin/sh\n", 0755);
    std::string text = "runtime: exec\n";
    if (with_rules) text += "events:\n  - handler: bin/h.sh\n    pattern: {table_name: [users]}\n";
    root_.writeTemplate("demo", text + archive);
    return root_.load("demo");
  }
  // The errors of an archive written from line 5 on.
  std::vector<std::string> errors(const std::string& archive) {
    const LoadResult result = load(archive);
    EXPECT_EQ(result.app, nullptr);
    return errorStrings(result);
  }
  std::vector<std::string> expected(const std::vector<std::string>& located) {
    return at(root_.templatePath("demo"), located);
  }

  AppsRoot root_;
};

TEST_F(ArchiveTemplate, ARetentionAndAPatternGiveTheArchive) {
  const LoadResult result = load("archive:\n  retention: 30d\n  pattern: {kind: [order]}\n");
  ASSERT_TRUE(result.errors.empty()) << errorStrings(result).front();
  ASSERT_TRUE(result.app->archive.has_value());
  EXPECT_EQ(result.app->archive->retention, std::chrono::hours(24 * 30));
  ASSERT_NE(result.app->archive->pattern, nullptr);
  EXPECT_EQ(result.app->archive->pattern_json, R"({"kind":["order"]})");
}

TEST_F(ArchiveTemplate, WithoutAPatternTheRulesDecide) {
  const LoadResult result = load("archive: {retention: 12h}\n");
  ASSERT_TRUE(result.errors.empty()) << errorStrings(result).front();
  ASSERT_TRUE(result.app->archive.has_value());
  EXPECT_EQ(result.app->archive->pattern, nullptr);
  EXPECT_EQ(result.app->archive->retention, std::chrono::hours(12));
}

TEST_F(ArchiveTemplate, NoArchiveKeyNoArchive) {
  const LoadResult result = load("");
  ASSERT_TRUE(result.errors.empty());
  EXPECT_FALSE(result.app->archive.has_value());
}

TEST_F(ArchiveTemplate, TheRetentionIsRequired) {
  EXPECT_EQ(errors("archive:\n  pattern: {kind: [order]}\n"),
            expected({"6:3: archive: missing required key \"retention\""}));
}

TEST_F(ArchiveTemplate, TheRetentionIsADurationUpTo366Days) {
  EXPECT_EQ(errors("archive: {retention: 367d}\n"),
            expected({"5:22: archive.retention: must be at most 366d, got 367d"}));
  EXPECT_EQ(errors("archive: {retention: forever}\n"),
            expected({"5:22: archive.retention: invalid duration \"forever\": expected a number "
                      "at position 1 (expected e.g. 500ms, 90s, 1h30m, 7d)"}));
  EXPECT_EQ(errors("archive: {retention: 0}\n"),
            expected({"5:22: archive.retention: must be greater than 0"}));
}

TEST_F(ArchiveTemplate, UnknownKeysAndNonMapsAreNamed) {
  EXPECT_EQ(errors("archive: {retention: 1d, patern: {kind: [a]}}\n"),
            expected({"5:26: archive: unknown key \"patern\" (did you mean \"pattern\"?)"}));
  EXPECT_EQ(errors("archive: 30d\n"),
            expected({"5:10: archive: expected a map with retention (and optionally pattern), "
                      "got the string \"30d\""}));
}

TEST_F(ArchiveTemplate, ABadPatternIsReportedAtItsPosition) {
  EXPECT_EQ(errors("archive:\n  retention: 1d\n  pattern: {kind: {nope: 1}}\n"),
            expected({"7:26: archive.pattern.kind.nope: a field condition must be a list of "
                      "alternatives, not a scalar: write nope: [1]"}));
}

TEST_F(ArchiveTemplate, WithoutRulesAnArchiveNeedsAPattern) {
  const LoadResult result = load("archive: {retention: 1d}\n", /*with_rules=*/false);
  EXPECT_EQ(result.app, nullptr);
  EXPECT_EQ(errorStrings(result),
            expected({"2:10: archive: an archive without a pattern keeps what the app's rules "
                      "match, and the app has no rules under events: give the archive a "
                      "pattern"}));
}

}  // namespace
}  // namespace relay::app
