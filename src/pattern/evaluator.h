#pragma once

#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/pattern.h"

namespace relay::pattern {

/// Whether `event` matches `pattern` at instant `now` (the reference for temporal cut-offs).
/// The straightforward recursive evaluation of docs/patterns.md; the RuleIndex must agree with it
/// on every input. Pure and thread-safe.
bool matches(const Pattern& pattern, const event::Event& event, Instant now);

/// Same, with the cut-off instant read from `clock` once.
bool matches(const Pattern& pattern, const event::Event& event, const Clock& clock);

/// Whether one field condition holds for `object` (absent or not an object: the field is
/// absent): any of its alternatives holds for the field's value.
bool fieldHolds(const Field& field, const std::optional<event::Value>& object, Instant now);

/// Whether the ANDed `fields` hold for `object`, which may be absent (nullopt) or not an
/// object: then every child is absent, so only conditions that accept absence hold.
bool fieldsHold(const std::vector<Field>& fields, const std::optional<event::Value>& object,
                Instant now);

}  // namespace relay::pattern
