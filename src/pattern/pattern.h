#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace relay::pattern {

/// A bare scalar alternative: the event value must equal it (docs/patterns.md "Scalars: YAML
/// types"). Numbers compare numerically as doubles; a string never equals a number or a boolean.
struct Literal {
  enum class Kind : std::uint8_t { kString, kNumber, kBool, kNull };
  Kind kind = Kind::kNull;
  std::string string;  // kString
  double number = 0;   // kNumber, always finite
  bool boolean = false;
};

/// `{prefix: "..."}`: a string event value starting with `value`.
struct Prefix {
  std::string value;
};

/// `{suffix: "..."}`: a string event value ending with `value`.
struct Suffix {
  std::string value;
};

/// `{exists: true|false}`: presence of the key, whatever its value (even null).
struct Exists {
  bool present = true;
};

/// `{gt|gte|lt|lte: ...}`: a numeric threshold, or a cut-off now()+offset that an RFC 3339
/// event value is compared with as an instant. The cut-off is computed at match time.
struct Comparison {
  enum class Op : std::uint8_t { kGt, kGte, kLt, kLte };
  Op op = Op::kGt;
  bool temporal = false;
  double number = 0;                    // !temporal; always finite
  std::chrono::milliseconds offset{0};  // temporal: cut-off = now + offset
};

struct Field;

/// A nested map alternative: child fields of an object value, ANDed.
struct Nested {
  std::vector<Field> fields;
};

/// One element of a field's list of alternatives (ORed).
using Alternative = std::variant<Literal, Prefix, Suffix, Exists, Comparison, Nested>;

/// A field name and its condition: a non-empty list of alternatives, any of which may hold.
struct Field {
  std::string name;
  std::vector<Alternative> alternatives;
};

/// A compiled pattern: a non-empty set of top-level field conditions, ANDed. Immutable once
/// built and safe to share across threads.
class Pattern {
 public:
  explicit Pattern(std::vector<Field> fields) : fields_(std::move(fields)) {}

  const std::vector<Field>& fields() const { return fields_; }

  /// One-line canonical rendering in YAML flow syntax that compiles back to the same pattern,
  /// e.g. `{"event_name": ["INSERT"], "score": [{gt: 70}]}`; strings always quoted.
  std::string toString() const;

 private:
  std::vector<Field> fields_;
};

/// One alternative as Pattern::toString() renders it: `"COMPLETED"`, `12`, `{prefix: "x"}`,
/// `{gt: "now()-5m"}`, `{"status": ["OK"]}`.
std::string toString(const Alternative& alternative);

}  // namespace relay::pattern
