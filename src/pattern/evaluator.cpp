#include "pattern/evaluator.h"

#include "pattern/predicates.h"

namespace relay::pattern {
namespace {

// A non-exists alternative against a present value. An array holds when any element does
// (recursively, so nested arrays are flattened); a nested map then needs one single element
// to satisfy all its fields.
bool valueHolds(const Alternative& alternative, const event::Value& value, Instant now) {
  if (value.isArray()) {
    for (const event::Value element : value.elements()) {
      if (valueHolds(alternative, element, now)) return true;
    }
    return false;
  }
  return std::visit(
      [&](const auto& a) -> bool {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, Literal>) {
          return literalHolds(a, value);
        } else if constexpr (std::is_same_v<T, Prefix>) {
          return value.isString() && value.string().starts_with(a.value);
        } else if constexpr (std::is_same_v<T, Suffix>) {
          return value.isString() && value.string().ends_with(a.value);
        } else if constexpr (std::is_same_v<T, Comparison>) {
          return comparisonHolds(a, value, now);
        } else if constexpr (std::is_same_v<T, Nested>) {
          return fieldsHold(a.fields, value, now);
        } else {
          static_assert(std::is_same_v<T, Exists>);
          return true;  // handled by the caller: exists looks at the key only
        }
      },
      alternative);
}

bool alternativeHolds(const Alternative& alternative, const std::optional<event::Value>& value,
                      Instant now) {
  if (const auto* exists = std::get_if<Exists>(&alternative)) {
    return value.has_value() == exists->present;
  }
  if (!value) {
    // Absent: value conditions fail, but a nested map can still hold through exists: false.
    const auto* nested = std::get_if<Nested>(&alternative);
    return nested != nullptr && fieldsHold(nested->fields, std::nullopt, now);
  }
  return valueHolds(alternative, *value, now);
}

}  // namespace

bool fieldHolds(const Field& field, const std::optional<event::Value>& object, Instant now) {
  std::optional<event::Value> child;
  if (object && object->isObject()) child = object->find(field.name);
  for (const Alternative& alternative : field.alternatives) {
    if (alternativeHolds(alternative, child, now)) return true;
  }
  return false;
}

bool fieldsHold(const std::vector<Field>& fields, const std::optional<event::Value>& object,
                Instant now) {
  for (const Field& field : fields) {
    if (!fieldHolds(field, object, now)) return false;
  }
  return true;
}

bool matches(const Pattern& pattern, const event::Event& event, Instant now) {
  return fieldsHold(pattern.fields(), event.root(), now);
}

bool matches(const Pattern& pattern, const event::Event& event, const Clock& clock) {
  return matches(pattern, event, Instant::fromWallTime(clock.now()));
}

}  // namespace relay::pattern
