#include "app/yaml_document.h"

#include <map>

#include "yaml/core_schema.h"

namespace relay::app {
namespace {

// Far beyond any real template, far below what an alias bomb expands to.
constexpr std::size_t kMaxNodes = 100'000;

// `events[<digits>].pattern`
bool isRulePattern(std::string_view path) {
  constexpr std::string_view kPrefix = "events[";
  constexpr std::string_view kSuffix = "].pattern";
  if (!path.starts_with(kPrefix) || !path.ends_with(kSuffix)) return false;
  const std::string_view index =
      path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size());
  if (index.empty()) return false;
  for (const char c : index) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

class KeyChecker {
 public:
  explicit KeyChecker(TemplateErrors& errors) : errors_(errors) {}

  // False once the node budget is spent. Below a rule's `pattern` only the budget counts: the
  // pattern compiler reports duplicate and non-scalar keys there itself, with its own paths.
  bool walk(const YAML::Node& node, const std::string& path, bool report = true) {
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
          errors_.add(key, atPath(path, "keys must be strings, got " + yaml::describe(key)));
          continue;
        }
        const auto [it, inserted] = first_line.emplace(key.Scalar(), yaml::line(key));
        if (!inserted) {
          errors_.add(key, atPath(path, "duplicate key \"" + key.Scalar() + "\" (first at line " +
                                            std::to_string(it->second) + ")"));
        }
        const std::string child = childPath(path, key.Scalar());
        if (!walk(pair.second, child, !isRulePattern(child))) return false;
      }
    }
    return true;
  }

 private:
  TemplateErrors& errors_;
  std::size_t visited_ = 0;
};

}  // namespace

std::optional<YAML::Node> parseYamlDocument(const std::string& text, TemplateErrors& errors) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& error) {
    errors.add(error.mark.line >= 0 ? error.mark.line + 1 : 1,
               error.mark.column >= 0 ? error.mark.column + 1 : 1,
               "YAML syntax error: " + error.msg);
    return std::nullopt;
  }
  if (documents.empty() || (documents.size() == 1 && documents.front().IsNull())) {
    errors.add(1, 1, "template is empty; expected a map with at least \"runtime\"");
    return std::nullopt;
  }
  if (documents.size() > 1) {
    errors.add(documents[1],
               "template must be a single YAML document; found a second one after \"---\"");
  }
  return documents.front();
}

bool checkYamlKeys(const YAML::Node& root, TemplateErrors& errors) {
  KeyChecker checker(errors);
  if (checker.walk(root, "")) return true;
  errors.add(1, 1,
             "template expands to more than " + std::to_string(kMaxNodes) +
                 " YAML nodes (aliases?); refusing to read it");
  return false;
}

std::optional<nlohmann::ordered_json> yamlToJson(const YAML::Node& node, const std::string& path,
                                                 TemplateErrors* errors) {
  const auto unrepresentable =
      [&](const std::string& why) -> std::optional<nlohmann::ordered_json> {
    if (errors == nullptr) return nlohmann::ordered_json(node.Scalar());
    errors->add(node, atPath(path, why));
    return std::nullopt;
  };
  switch (yaml::typeOf(node)) {
    case yaml::Type::kNull:
      return nlohmann::ordered_json(nullptr);
    case yaml::Type::kBool:
      return nlohmann::ordered_json(*yaml::boolValue(node));
    case yaml::Type::kInt:
      if (const auto value = yaml::intValue(node)) return nlohmann::ordered_json(*value);
      if (const auto value = yaml::numberValue(node)) return nlohmann::ordered_json(*value);
      return unrepresentable(node.Scalar() + " is too large for JSON");
    case yaml::Type::kFloat:
      if (const auto value = yaml::numberValue(node)) return nlohmann::ordered_json(*value);
      return unrepresentable(node.Scalar() + " cannot be represented in JSON");
    case yaml::Type::kString:
      return nlohmann::ordered_json(node.Scalar());
    case yaml::Type::kTagged:
      return unrepresentable("YAML tags such as " + node.Tag() + " are not supported");
    case yaml::Type::kList: {
      nlohmann::ordered_json array = nlohmann::ordered_json::array();
      bool ok = true;
      std::size_t index = 0;
      for (const YAML::Node& element : node) {
        auto value = yamlToJson(element, elementPath(path, index++), errors);
        if (value) {
          array.push_back(std::move(*value));
        } else {
          ok = false;
        }
      }
      if (!ok) return std::nullopt;
      return array;
    }
    case yaml::Type::kMap: {
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      bool ok = true;
      for (const auto& pair : node) {
        if (!pair.first.IsScalar()) continue;  // reported by checkYamlKeys
        const std::string& key = pair.first.Scalar();
        if (object.contains(key)) continue;  // a duplicate, reported by checkYamlKeys
        auto value = yamlToJson(pair.second, childPath(path, key), errors);
        if (value) {
          object[key] = std::move(*value);
        } else {
          ok = false;
        }
      }
      if (!ok) return std::nullopt;
      return object;
    }
  }
  return std::nullopt;
}

std::string dumpJson(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
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

}  // namespace relay::app
