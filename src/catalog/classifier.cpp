#include "catalog/classifier.h"

namespace relay::catalog {
namespace {

std::vector<Match> rulesOf(const app::Snapshot& snapshot) {
  std::vector<Match> rules;
  for (const app::AppEntry& entry : snapshot.apps()) {
    if (!entry.status.loaded || !entry.app) continue;
    for (const app::Rule& rule : entry.app->rules) rules.push_back({&entry, &rule});
  }
  return rules;
}

std::vector<std::shared_ptr<const pattern::Pattern>> patternsOf(const std::vector<Match>& rules) {
  std::vector<std::shared_ptr<const pattern::Pattern>> patterns;
  patterns.reserve(rules.size());
  for (const Match& match : rules) patterns.push_back(match.rule->pattern);
  return patterns;
}

}  // namespace

Classifier::Classifier(std::shared_ptr<const app::Snapshot> snapshot)
    : snapshot_(std::move(snapshot)), rules_(rulesOf(*snapshot_)), index_(patternsOf(rules_)) {}

std::vector<Match> Classifier::classify(const event::Event& event, Instant now) const {
  std::vector<std::uint32_t> hits;
  index_.match(event, now, hits);
  std::vector<Match> matches;
  matches.reserve(hits.size());
  for (std::uint32_t hit : hits) matches.push_back(rules_[hit]);
  return matches;
}

}  // namespace relay::catalog
