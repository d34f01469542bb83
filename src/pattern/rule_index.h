#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/pattern.h"

namespace relay::pattern {

/// The compiled rules of every app, in the order they are evaluated (apps sorted by name, each
/// app's rules in declaration order), indexed so that classifying an event costs far less than
/// evaluating every rule: one walk over the event's fields that some rule names, hash lookups
/// of their values, then a full check of the few candidate rules that need one. Gives exactly
/// the results of evaluating each rule with matches() (evaluator.h). Immutable; match() is
/// thread-safe.
class RuleIndex {
 public:
  /// Statistics of how the rules were indexed, for benchmarks and diagnostics.
  struct Stats {
    std::size_t rules = 0;
    std::size_t indexed = 0;  // found through a key condition
    std::size_t exact = 0;    // of those, decided by the key condition alone (no check)
    std::size_t scanned = 0;  // no indexable condition: evaluated for every event
  };

  explicit RuleIndex(std::vector<std::shared_ptr<const Pattern>> rules);
  ~RuleIndex();
  RuleIndex(RuleIndex&&) noexcept;
  RuleIndex& operator=(RuleIndex&&) noexcept;

  std::size_t size() const;
  const Pattern& rule(std::size_t index) const;
  Stats stats() const;

  /// Appends to `out` the indices of the rules matching `event` at instant `now` (the
  /// temporal cut-off), ascending. Allocation-free when `out` has room for the candidates.
  void match(const event::Event& event, Instant now, std::vector<std::uint32_t>& out) const;

  /// Same, reading the cut-off instant from `clock` once.
  void match(const event::Event& event, const Clock& clock, std::vector<std::uint32_t>& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace relay::pattern
