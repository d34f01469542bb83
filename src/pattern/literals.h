#pragma once

#include <string_view>

#include "common/result.h"
#include "pattern/pattern.h"

namespace YAML {
class Node;
}

namespace relay::pattern {

/// The literal a YAML scalar or null node stands for, typed by the YAML 1.2 core schema
/// (yaml::typeOf): null, boolean, number (ints and floats alike, as a finite double; -0 is 0)
/// or string. Non-finite or out-of-range numbers, other tags and text that is not UTF-8 are
/// errors.
Result<Literal> literalOf(const YAML::Node& node);

/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
/// U+10FFFF). Events are always valid UTF-8, so a pattern string that is not could never match.
bool isValidUtf8(std::string_view text);

/// Describes a literal for messages: `string "x"`, `number 12`, `boolean true`, `null`.
std::string describeLiteral(const Literal& literal);

/// Formats a finite double the shortest way that reads back to the same value.
std::string formatNumber(double value);

}  // namespace relay::pattern
