#include "pattern/predicates.h"

namespace relay::pattern {
namespace {

template <typename T>
bool compare(Comparison::Op op, const T& left, const T& right) {
  switch (op) {
    case Comparison::Op::kGt:
      return left > right;
    case Comparison::Op::kGte:
      return left >= right;
    case Comparison::Op::kLt:
      return left < right;
    case Comparison::Op::kLte:
      return left <= right;
  }
  return false;
}

}  // namespace

Instant cutoff(Instant now, std::chrono::milliseconds offset) {
  constexpr std::int64_t kNanosPerSecond = 1'000'000'000;
  const std::int64_t millis = offset.count();
  std::int64_t seconds = now.seconds + millis / 1000;
  std::int64_t nanos = now.nanos + (millis % 1000) * 1'000'000;
  if (nanos < 0) {
    nanos += kNanosPerSecond;
    --seconds;
  } else if (nanos >= kNanosPerSecond) {
    nanos -= kNanosPerSecond;
    ++seconds;
  }
  return {seconds, static_cast<std::int32_t>(nanos)};
}

bool literalHolds(const Literal& literal, const event::Value& value) {
  switch (literal.kind) {
    case Literal::Kind::kString:
      return value.isString() && value.string() == literal.string;
    case Literal::Kind::kNumber:
      return value.isNumber() && value.number() == literal.number;
    case Literal::Kind::kBool:
      return value.isBool() && value.boolean() == literal.boolean;
    case Literal::Kind::kNull:
      return value.isNull();
  }
  return false;
}

bool comparisonHolds(const Comparison& comparison, const event::Value& value, Instant now) {
  if (!comparison.temporal) {
    return value.isNumber() && compare(comparison.op, value.number(), comparison.number);
  }
  if (!value.isString()) return false;
  const std::optional<Instant> instant = parseRfc3339(value.string());
  return instant && compare(comparison.op, *instant, cutoff(now, comparison.offset));
}

}  // namespace relay::pattern
