#pragma once

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "app/template_errors.h"
#include "yaml/document.h"

namespace relay::app {

/// Parses template text into its single YAML document. Syntax errors, an empty file and a
/// second document are reported to `errors`; nullopt when there is nothing to validate.
std::optional<YAML::Node> parseYamlDocument(const std::string& text, TemplateErrors& errors);

/// Walks every map of the document and reports what yaml-cpp accepts silently: duplicate keys
/// (yaml-cpp keeps both and lookups see only the first) and keys that are not scalars. Returns
/// false, after reporting it, when the document expands to more nodes than a template could
/// sensibly hold (an alias bomb), so that nothing else walks it.
bool checkYamlKeys(const YAML::Node& root, TemplateErrors& errors);

/// Converts YAML to JSON under the core schema (plain `1` is a number, `"1"` a string). With
/// `errors`, values JSON cannot hold (`.inf`, tags) are reported under `path` and yield
/// nullopt; without, they become strings of their text.
std::optional<nlohmann::ordered_json> yamlToJson(const YAML::Node& node, const std::string& path,
                                                 TemplateErrors* errors);

/// Compact JSON text; invalid UTF-8 is replaced rather than thrown on.
std::string dumpJson(const nlohmann::ordered_json& json);

/// The path helpers of src/yaml, where the key check that shares them lives.
using yaml::atPath;
using yaml::childPath;
using yaml::elementPath;

}  // namespace relay::app
