#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "app/snapshot.h"
#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/rule_index.h"

namespace relay::catalog {

/// One rule that matched: which app (its registry entry, with its status) and which rule.
struct Match {
  const app::AppEntry* entry;
  const app::Rule* rule;
};

/// The rule index of one registry snapshot: every loaded app's rules (available or not), apps
/// in name order, rules in declaration order. Immutable; keeps its snapshot alive.
class Classifier {
 public:
  explicit Classifier(std::shared_ptr<const app::Snapshot> snapshot);

  /// The matching rules of `event` at `now`, in dispatch order.
  std::vector<Match> classify(const event::Event& event, Instant now) const;

  const app::Snapshot& snapshot() const { return *snapshot_; }
  std::size_t rules() const { return rules_.size(); }

 private:
  std::shared_ptr<const app::Snapshot> snapshot_;
  std::vector<Match> rules_;
  pattern::RuleIndex index_;
};

}  // namespace relay::catalog
