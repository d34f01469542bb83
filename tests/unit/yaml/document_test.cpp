#include "yaml/document.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace relay::yaml {
namespace {

std::vector<std::string> keyProblems(const std::string& text, const QuietBelow& quiet = {}) {
  auto loaded = loadDocuments(text);
  const auto& documents = std::get<std::vector<YAML::Node>>(loaded);
  std::vector<std::string> found;
  const bool within = checkKeys(
      documents.front(),
      [&found](const YAML::Node& at, std::string message) {
        found.push_back(std::to_string(line(at)) + ":" + std::to_string(column(at)) + ": " +
                        std::move(message));
      },
      quiet);
  if (!within) found.push_back("over budget");
  return found;
}

// Ten lists of ten aliases of the list before: 10^(levels+1) nodes once expanded.
std::string aliasBomb(int levels) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= levels; ++i) {
    const std::string previous = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + previous;
    for (int j = 1; j < 10; ++j) yaml += ", " + previous;
    yaml += "]\n";
  }
  return yaml;
}

TEST(LoadDocuments, ReturnsEveryDocument) {
  auto loaded = loadDocuments("a: 1\n---\nb: 2\n");
  const auto* documents = std::get_if<std::vector<YAML::Node>>(&loaded);
  ASSERT_NE(documents, nullptr);
  ASSERT_EQ(documents->size(), 2u);
  EXPECT_EQ((*documents)[1]["b"].Scalar(), "2");
}

TEST(LoadDocuments, ASyntaxErrorIsAProblemAtItsPosition) {
  auto loaded = loadDocuments("a: 1\nb: [1\n");
  const auto* problem = std::get_if<TextProblem>(&loaded);
  ASSERT_NE(problem, nullptr);
  EXPECT_EQ(problem->line, 3);
  EXPECT_EQ(problem->message.rfind("YAML syntax error: ", 0), 0u) << problem->message;
}

TEST(CheckKeys, ReportsDuplicateAndNonScalarKeysWithTheirPaths) {
  EXPECT_EQ(keyProblems("a: 1\nb:\n  c: 2\n  c: 3\n? [x]\n: 4\na: 5\n"),
            (std::vector<std::string>{
                "4:3: b: duplicate key \"c\" (first at line 3)",
                "5:3: keys must be strings, got a list",
                "7:1: duplicate key \"a\" (first at line 1)",
            }));
}

TEST(CheckKeys, BelowAQuietPathOnlyTheBudgetCounts) {
  const auto quiet = [](const std::string& path) { return path == "list[0].pattern"; };
  EXPECT_EQ(keyProblems("list:\n  - pattern: {a: [1], a: [2]}\n    name: x\n    name: y\n", quiet),
            (std::vector<std::string>{"4:5: list[0]: duplicate key \"name\" (first at line 3)"}));
}

TEST(CheckKeys, AnAliasBombSpendsTheBudget) {
  EXPECT_EQ(keyProblems(aliasBomb(7)), (std::vector<std::string>{"over budget"}));
  // Expanded, 10^4 nodes are within it: an alias is not refused as such.
  EXPECT_EQ(keyProblems(aliasBomb(3)), (std::vector<std::string>{}));
}

TEST(WithinNodeBudget, CountsExpandedAliasesAndIgnoresKeys) {
  EXPECT_FALSE(withinNodeBudget(YAML::Load(aliasBomb(7))));
  EXPECT_TRUE(withinNodeBudget(YAML::Load(aliasBomb(3))));
  EXPECT_TRUE(withinNodeBudget(YAML::Load("a: 1\na: 2\n")));
}

TEST(Paths, NameMapChildrenAndListElements) {
  EXPECT_EQ(childPath("", "events"), "events");
  EXPECT_EQ(childPath(elementPath("events", 0), "handler"), "events[0].handler");
  EXPECT_EQ(atPath("", "message"), "message");
  EXPECT_EQ(atPath("a.b", "message"), "a.b: message");
}

}  // namespace
}  // namespace relay::yaml
