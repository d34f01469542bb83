#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "common/result.h"

namespace relay::yaml {

/// What a node is under the YAML 1.2 core schema (docs/apps.md "Types: YAML 1.2, strictly",
/// docs/patterns.md "Scalars: YAML types"). yaml-cpp leaves resolving plain scalars to its
/// caller; this is the one place Relay does it, for templates and patterns alike.
enum class Type { kNull, kBool, kInt, kFloat, kString, kMap, kList, kTagged };

/// The type of `node`: a plain (unquoted, untagged) scalar is typed by plainType(); a quoted,
/// block or `!!str` scalar is a string; a scalar with any other tag is kTagged. An undefined
/// node is null.
Type typeOf(const YAML::Node& node);

/// The core schema's type for the text of a plain scalar: null (`null`, `Null`, `NULL`, `~`,
/// empty), bool (`true`/`True`/`TRUE`/`false`/...), int (`[-+]?[0-9]+`, `0o[0-7]+`,
/// `0x[0-9a-fA-F]+`), float (`[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`,
/// `[-+]?.inf` and `.nan` in three spellings each), else string. So `-.nan`, `1_000`, `0b1`,
/// `yes` and `0x` are strings.
Type plainType(std::string_view text);

/// The value of an int scalar; nullopt when `node` is not one or it does not fit 64 bits.
std::optional<std::int64_t> intValue(const YAML::Node& node);

/// The value of an int or float scalar as a finite double. kInvalidArgument saying why not:
/// not a number, not finite (`.inf`, `.nan`), out of the range of a double (`1e400`, `1e-400`),
/// or a `0x`/`0o` int beyond 64 bits.
Result<double> numberValue(const YAML::Node& node);

/// numberValue() for the text of a plain scalar.
Result<double> plainNumberValue(std::string_view text);

/// The value of a bool scalar.
std::optional<bool> boolValue(const YAML::Node& node);

/// Whether `node` is a plain scalar spelled like a YAML 1.1 boolean (`yes`, `off`, `Y`...),
/// which the core schema reads as a string: worth a hint where a boolean was expected.
bool isYaml11Boolean(const YAML::Node& node);

/// A phrase naming the node's type and value for messages: `the string "4"`, `a list`.
std::string describe(const YAML::Node& node);

/// 1-based line and column of `node` (yaml-cpp marks are 0-based; no mark is 1:1).
int line(const YAML::Node& node);
int column(const YAML::Node& node);

}  // namespace relay::yaml
