#include "pattern/explain.h"

#include <algorithm>
#include <cassert>

#include "common/quote_json.h"
#include "event/render.h"
#include "pattern/evaluator.h"

namespace relay::pattern {
namespace {

// A field name as a path segment: plain names as they are, anything that would make the path
// ambiguous (dots, spaces, quotes, control characters, empty) as a JSON string.
std::string segment(const std::string& name) {
  const bool plain = !name.empty() && name.find_first_of(".\"[] \t\r\n") == std::string::npos &&
                     std::all_of(name.begin(), name.end(),
                                 [](char c) { return static_cast<unsigned char>(c) >= 0x20; });
  return plain ? name : quoteJson(name);
}

const char* typeName(event::Type type) {
  switch (type) {
    case event::Type::kNull:
      return "null";
    case event::Type::kFalse:
    case event::Type::kTrue:
      return "a boolean";
    case event::Type::kNumber:
      return "a number";
    case event::Type::kString:
      return "a string";
    case event::Type::kArray:
      return "an array";
    case event::Type::kObject:
      return "an object";
  }
  return "a value";
}

bool temporal(const Field& field) {
  for (const Alternative& alternative : field.alternatives) {
    const auto* comparison = std::get_if<Comparison>(&alternative);
    if (comparison != nullptr && comparison->temporal) return true;
  }
  return false;
}

// What was there: the value, or why nothing was.
std::string got(const std::optional<event::Value>& value, const std::optional<event::Value>& parent,
                const std::string& parent_path) {
  if (value) return event::render(*value);
  if (parent_path.empty() || (parent && parent->isObject())) return "nothing (no such field)";
  if (!parent) return "nothing (" + parent_path + " is absent)";
  return std::string("nothing (") + parent_path + " is " + typeName(parent->type()) +
         ", not an object)";
}

std::string wanted(const Field& field, Instant now) {
  std::string out = "one of [";
  for (std::size_t i = 0; i < field.alternatives.size(); ++i) {
    if (i > 0) out += ", ";
    out += toString(field.alternatives[i]);
  }
  out += "]";
  if (temporal(field)) out += " with now() = " + formatInstant(now);
  return out;
}

// The first field of `fields` that fails for `object`; nullopt when all hold.
std::optional<Failure> firstFailure(const std::vector<Field>& fields,
                                    const std::optional<event::Value>& object,
                                    const std::string& path, Instant now) {
  for (const Field& field : fields) {
    if (fieldHolds(field, object, now)) continue;
    std::optional<event::Value> child;
    if (object && object->isObject()) child = object->find(field.name);
    const std::string child_path =
        path.empty() ? segment(field.name) : path + "." + segment(field.name);
    const auto* nested =
        field.alternatives.size() == 1 ? std::get_if<Nested>(&field.alternatives.front()) : nullptr;
    // One nested map against an absent or non-array value fails exactly when its own fields
    // fail for that value (evaluator.cpp): name the innermost culprit.
    if (nested != nullptr && !(child && child->isArray())) {
      std::optional<Failure> inner = firstFailure(nested->fields, child, child_path, now);
      assert(inner && "a failing nested map has a failing child field");
      if (inner) return inner;
    }
    Failure failure;
    failure.path = child_path;
    failure.field = &field;
    failure.parent = object;
    failure.value = child;
    failure.got = got(child, object, path);
    failure.wanted = wanted(field, now);
    return failure;
  }
  return std::nullopt;
}

}  // namespace

std::string Failure::toString() const { return path + ": got " + got + ", wanted " + wanted; }

std::string Explanation::toString() const {
  return matched || !failure ? "match" : failure->toString();
}

Explanation explain(const Pattern& pattern, const event::Event& event, Instant now) {
  Explanation explanation;
  explanation.failure = firstFailure(pattern.fields(), event.root(), "", now);
  explanation.matched = !explanation.failure.has_value();
  return explanation;
}

}  // namespace relay::pattern
