#include "yaml/document.h"

#include <map>

#include "yaml/core_schema.h"

namespace relay::yaml {
namespace {

class KeyChecker {
 public:
  KeyChecker(const KeyReport& report, const QuietBelow& quiet) : report_(report), quiet_(quiet) {}

  // False once the node budget is spent. Where `report` is false only the budget counts.
  bool walk(const YAML::Node& node, const std::string& path, bool report) {
    if (++visited_ > kMaxNodes) return false;
    if (node.IsSequence()) {
      std::size_t index = 0;
      for (const YAML::Node& element : node) {
        if (!walk(element, elementPath(path, index++), report)) return false;
      }
    } else if (node.IsMap()) {
      std::map<std::string, int> first_line;
      for (const auto& pair : node) {
        const YAML::Node& key = pair.first;
        if (!report) {
          if (!walk(pair.second, path, false)) return false;
          continue;
        }
        if (!key.IsScalar()) {
          report_(key, atPath(path, "keys must be strings, got " + describe(key)));
          continue;
        }
        const auto [it, inserted] = first_line.emplace(key.Scalar(), line(key));
        if (!inserted) {
          report_(key, atPath(path, "duplicate key \"" + key.Scalar() + "\" (first at line " +
                                        std::to_string(it->second) + ")"));
        }
        const std::string child = childPath(path, key.Scalar());
        if (!walk(pair.second, child, !quieted(child))) return false;
      }
    }
    return true;
  }

  bool quieted(const std::string& path) const { return quiet_ && quiet_(path); }

 private:
  const KeyReport& report_;
  const QuietBelow& quiet_;
  std::size_t visited_ = 0;
};

}  // namespace

std::variant<std::vector<YAML::Node>, TextProblem> loadDocuments(const std::string& text) {
  try {
    return YAML::LoadAll(text);
  } catch (const YAML::Exception& error) {
    return TextProblem{error.mark.line >= 0 ? error.mark.line + 1 : 1,
                       error.mark.column >= 0 ? error.mark.column + 1 : 1,
                       "YAML syntax error: " + error.msg};
  }
}

bool checkKeys(const YAML::Node& root, const KeyReport& report, const QuietBelow& quiet) {
  KeyChecker checker(report, quiet);
  return checker.walk(root, "", !checker.quieted(""));
}

bool withinNodeBudget(const YAML::Node& root) {
  const KeyReport none;
  const QuietBelow quiet;
  return KeyChecker(none, quiet).walk(root, "", false);
}

std::string atPath(const std::string& path, const std::string& message) {
  return path.empty() ? message : path + ": " + message;
}

std::string childPath(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string elementPath(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

}  // namespace relay::yaml
