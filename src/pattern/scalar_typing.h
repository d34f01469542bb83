#pragma once

#include <string_view>

#include "common/result.h"
#include "pattern/pattern.h"

namespace YAML {
class Node;
}

namespace relay::pattern {

/// Types a YAML scalar or null node as a pattern literal, following the YAML 1.2 core schema:
/// a plain (untagged, unquoted) scalar is null (`null`, `Null`, `NULL`, `~`, empty), a
/// boolean (`true`/`True`/`TRUE`/`false`/...), a number (decimal, `0x`/`0o` integers, floats
/// with exponent) or else a string; a quoted, block or `!!str`-tagged scalar is always a
/// string. Non-finite numbers (`.inf`, `.nan`, overflow) and other tags are errors.
Result<Literal> typeScalar(const YAML::Node& node);

/// Types the text of a plain (unquoted, untagged) scalar per the YAML 1.2 core schema.
Result<Literal> typePlainScalar(std::string_view text);

/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
/// U+10FFFF). Events are always valid UTF-8, so a pattern string that is not could never match.
bool isValidUtf8(std::string_view text);

/// Describes a literal for messages: `string "x"`, `number 12`, `boolean true`, `null`.
std::string describeLiteral(const Literal& literal);

/// Formats a finite double the shortest way that reads back to the same value.
std::string formatNumber(double value);

}  // namespace relay::pattern
