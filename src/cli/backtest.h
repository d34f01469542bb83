#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/snapshot.h"
#include "catalog/classifier.h"
#include "stream/stream_entry.h"

namespace relay::cli {

/// How often one rule matched during a backtest, and the newest few message ids it matched.
struct RuleCount {
  std::size_t matches = 0;
  std::vector<std::string> samples;  // newest first
};

/// One rule of the candidate or the deployed templates (an app/handler pair), with its counts
/// on each side; a side that has no such rule has no count.
struct RuleRow {
  std::string app;
  std::string handler;
  int line = 0;  // in the candidate's template.yaml, else the deployed one's
  std::optional<RuleCount> candidate;
  std::optional<RuleCount> deployed;
};

/// Classifies stream entries with two sets of templates at once, the candidate and the deployed
/// one, exactly as the worker would (the consumer's event checks, schedule occurrences skipped,
/// each entry matched at the instant of its id, its publication time): `relay backtest`
/// (docs/cli.md). Pure: no Redis, no clock.
class Backtest {
 public:
  /// `deployed` may be null (no deployed templates to compare with).
  Backtest(std::shared_ptr<const app::Snapshot> candidate,
           std::shared_ptr<const app::Snapshot> deployed, std::size_t max_event_bytes,
           std::size_t samples);

  /// Counts one entry; entries are expected newest first (as XREVRANGE gives them).
  void add(const stream::StreamEntry& entry);

  std::size_t entries() const { return entries_; }
  std::size_t events() const { return events_; }
  std::size_t schedules() const { return schedules_; }
  std::size_t malformed() const { return malformed_; }
  std::size_t oversized() const { return oversized_; }
  /// Events no rule of that side matched (the worker acknowledges them as unmatched).
  std::size_t unmatchedCandidate() const { return unmatched_candidate_; }
  std::size_t unmatchedDeployed() const { return unmatched_deployed_; }
  const std::string& newestId() const { return newest_; }
  const std::string& oldestId() const { return oldest_; }

  /// The candidate's rules in dispatch order, then the deployed rules the candidate lacks.
  std::vector<RuleRow> rows() const;

 private:
  struct Side {
    std::unique_ptr<const catalog::Classifier> classifier;  // null: no such side
    std::unordered_map<const app::Rule*, RuleCount> counts;
  };
  /// Classifies `event` with one side; returns whether any rule matched.
  bool count(Side& side, const event::Event& event, Instant now, const std::string& id) const;

  Side candidate_;
  Side deployed_;
  std::size_t max_event_bytes_;
  std::size_t samples_;
  std::size_t entries_ = 0, events_ = 0, schedules_ = 0, malformed_ = 0, oversized_ = 0;
  std::size_t unmatched_candidate_ = 0, unmatched_deployed_ = 0;
  std::string newest_, oldest_;
};

}  // namespace relay::cli
