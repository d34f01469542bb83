// The RuleIndex against the reference evaluator on generated rules and events (seeded, so
// every run checks the same inputs): any difference is a bug in the index.
#include <gtest/gtest.h>

#include <string>

#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/evaluator.h"
#include "pattern/rule_index.h"
#include "unit/pattern/pattern_generator.h"

namespace relay::pattern {
namespace {

using testing::Generator;

// Checks every generated event against every generated rule; returns the number of (event,
// rule) matches, so that callers can assert that the sets exercise matching at all.
std::size_t expectIndexAgrees(std::uint64_t seed, std::size_t names, std::size_t rule_count,
                              std::size_t event_count) {
  Generator generator(seed, names);
  std::vector<std::shared_ptr<const Pattern>> rules;
  for (std::size_t i = 0; i < rule_count; ++i) rules.push_back(generator.rule());
  const RuleIndex index(rules);
  const Instant now = *parseRfc3339("2026-01-01T10:00:00Z");
  std::size_t total = 0;
  std::vector<std::uint32_t> got;
  for (std::size_t e = 0; e < event_count; ++e) {
    const std::string json = generator.event();
    Result<event::Event> event = event::decode(json);
    if (!event.ok()) {
      ADD_FAILURE() << json << ": " << event.error().message;
      return total;
    }
    std::vector<std::uint32_t> want;
    for (std::uint32_t r = 0; r < rules.size(); ++r) {
      if (matches(*rules[r], *event, now)) want.push_back(r);
    }
    got.clear();
    index.match(*event, now, got);
    if (got != want) {
      ADD_FAILURE() << "seed " << seed << ", event " << json << ": index "
                    << ::testing::PrintToString(got) << ", reference "
                    << ::testing::PrintToString(want);
      return total;
    }
    total += want.size();
  }
  return total;
}

TEST(IndexDifferential, AgreesWithReferenceOnFewNames) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    // The sets must exercise matching, not only agree on "nothing matches".
    EXPECT_GT(expectIndexAgrees(seed, 5, 200, 2000), 2000u) << "seed " << seed;
  }
}

TEST(IndexDifferential, AgreesWithReferenceWithHashedChildren) {
  // More than 8 field names at one level switches child lookup to the hash table.
  EXPECT_GT(expectIndexAgrees(11, 20, 300, 2000), 2000u);
}

TEST(IndexDifferential, AgreesWithReferenceBeyondSixtyFourChildren) {
  // Past 64 children the child lookup is the hash table's alone.
  EXPECT_GT(expectIndexAgrees(12, 90, 600, 2000), 2000u);
}

TEST(IndexDifferential, AgreesWithReferenceOnSingleRules) {
  std::size_t total = 0;
  for (std::uint64_t seed = 100; seed < 200; ++seed) total += expectIndexAgrees(seed, 5, 1, 200);
  EXPECT_GT(total, 1000u);
}

TEST(IndexDifferential, StatsAccountForEveryRule) {
  Generator generator(7, 5);
  std::vector<std::shared_ptr<const Pattern>> rules;
  for (int i = 0; i < 100; ++i) rules.push_back(generator.rule());
  const RuleIndex::Stats stats = RuleIndex(rules).stats();
  EXPECT_EQ(stats.rules, 100u);
  EXPECT_EQ(stats.indexed + stats.scanned, 100u);
  EXPECT_GT(stats.indexed, 0u);
  EXPECT_GT(stats.exact, 0u);
  EXPECT_GT(stats.scanned, 0u);
}

}  // namespace
}  // namespace relay::pattern
