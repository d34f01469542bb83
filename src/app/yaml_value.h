#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace relay::app {

/// What a YAML node is under the YAML 1.2 core schema: a plain scalar is null, a boolean
/// (`true`/`false` in three spellings only), an integer, a float or else a string; anything
/// quoted is a string. yaml-cpp leaves that resolution to its caller.
enum class YamlType { kNull, kBool, kInt, kFloat, kString, kMap, kList, kTagged };

YamlType yamlType(const YAML::Node& node);

/// A phrase naming the node's type and value for messages: `the string "4"`, `a list`.
std::string describeYaml(const YAML::Node& node);

/// The value of a plain integer scalar (decimal, 0x hex, 0o octal); nullopt if it is not one
/// or does not fit.
std::optional<std::int64_t> yamlInt(const YAML::Node& node);
/// The value of a plain integer or float scalar (finite only).
std::optional<double> yamlNumber(const YAML::Node& node);
/// The value of a plain boolean scalar.
std::optional<bool> yamlBool(const YAML::Node& node);

/// Whether a plain scalar is a YAML 1.1 boolean spelling (`yes`, `off`, ...) that YAML 1.2 and
/// Relay read as a string: worth a hint when a boolean was expected.
bool isYaml11Boolean(const YAML::Node& node);

/// 1-based line and column of a node (yaml-cpp marks are 0-based; a missing mark is 1:1).
int yamlLine(const YAML::Node& node);
int yamlColumn(const YAML::Node& node);

}  // namespace relay::app
