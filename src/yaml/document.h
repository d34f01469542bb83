#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace relay::yaml {

/// The most nodes one YAML file Relay reads may expand to (an alias expands wherever it is
/// used): far beyond any template or pattern a person writes, far below what an alias bomb
/// expands to.
inline constexpr std::size_t kMaxNodes = 100'000;

/// A problem with YAML text, at a 1-based line and column.
struct TextProblem {
  int line = 1;
  int column = 1;
  std::string message;
};

/// The documents of `text` (`---` separates them), or its syntax error as
/// "YAML syntax error: <why>" at its position. yaml-cpp's exceptions stop here.
std::variant<std::vector<YAML::Node>, TextProblem> loadDocuments(const std::string& text);

/// Receives one problem checkKeys() finds: the node it is at and the message (its path first).
using KeyReport = std::function<void(const YAML::Node& at, std::string message)>;
/// Whether the keys of the maps at and below `path` are left to another checker (a pattern's
/// compiler reports its own duplicate fields): there only the node budget counts.
using QuietBelow = std::function<bool(const std::string& path)>;

/// Walks every map of the document and reports through `report` what yaml-cpp accepts
/// silently: duplicate keys (yaml-cpp keeps both and lookups see only the first) and keys that
/// are not scalars. Returns false, having reported nothing about it, when the document expands
/// to more than kMaxNodes nodes (an alias bomb), so that the caller refuses it and nothing else
/// walks it. The one check of templates and pattern files alike.
bool checkKeys(const YAML::Node& root, const KeyReport& report, const QuietBelow& quiet = {});

/// Whether `root` expands to at most kMaxNodes nodes: checkKeys() with every key left to the
/// caller (a pattern file's keys are its compiler's to report).
bool withinNodeBudget(const YAML::Node& root);

/// `path: message`, or just the message at the document root.
std::string atPath(const std::string& path, const std::string& message);

/// The path of a map child (`events[0].handler`) and of a list element (`events[0]`).
std::string childPath(const std::string& path, const std::string& key);
std::string elementPath(const std::string& path, std::size_t index);

}  // namespace relay::yaml
