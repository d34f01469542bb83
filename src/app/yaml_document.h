#pragma once

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "app/template_errors.h"

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

/// `path: message`, or just the message at the document root.
std::string atPath(const std::string& path, const std::string& message);

/// The path of a map child (`events[0].handler`) and of a list element (`events[0]`).
std::string childPath(const std::string& path, const std::string& key);
std::string elementPath(const std::string& path, std::size_t index);

}  // namespace relay::app
