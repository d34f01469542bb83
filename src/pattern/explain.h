#pragma once

#include <optional>
#include <string>

#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/pattern.h"

namespace relay::pattern {

/// The first condition of a pattern an event fails (docs/patterns.md "Why an event does not
/// match"). Points into the pattern and the event it was made from.
struct Failure {
  std::string path;                    // dotted field path from the top: `new_image.status`
  const Field* field = nullptr;        // the failing condition
  std::optional<event::Value> parent;  // the value the field was looked up in (nullopt: absent)
  std::optional<event::Value> value;   // the event's value at `path`; nullopt when absent
  std::string got;                     // `"PENDING"`, `12`, `nothing (no such field)`
  std::string wanted;                  // `one of ["COMPLETED"]`

  /// `new_image.status: got "PENDING", wanted one of ["COMPLETED"]`
  std::string toString() const;
};

/// Whether an event matches a pattern and, if not, why.
struct Explanation {
  bool matched = false;
  std::optional<Failure> failure;  // set exactly when !matched

  /// `match`, or the failure.
  std::string toString() const;
};

/// Explains matches(pattern, event, now): top-level fields in pattern order, the first one
/// whose alternatives all fail is the failure; when its only alternative is a nested map and
/// the value is not an array, the explanation descends to the innermost failing child. The
/// verdict is computed with the evaluator's own fieldHolds(), so it always agrees with
/// matches() and the RuleIndex. Pure and thread-safe.
Explanation explain(const Pattern& pattern, const event::Event& event, Instant now);

}  // namespace relay::pattern
