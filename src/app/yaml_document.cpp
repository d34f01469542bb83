#include "app/yaml_document.h"

#include <variant>

#include "yaml/core_schema.h"
#include "yaml/document.h"

namespace relay::app {
namespace {

// `events[<digits>].pattern`: the pattern compiler reports duplicate and non-scalar keys there
// itself, with its own paths.
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

}  // namespace

std::optional<YAML::Node> parseYamlDocument(const std::string& text, TemplateErrors& errors) {
  auto loaded = yaml::loadDocuments(text);
  if (const auto* problem = std::get_if<yaml::TextProblem>(&loaded)) {
    errors.add(problem->line, problem->column, problem->message);
    return std::nullopt;
  }
  const auto& documents = std::get<std::vector<YAML::Node>>(loaded);
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
  const auto report = [&errors](const YAML::Node& at, std::string message) {
    errors.add(at, std::move(message));
  };
  if (yaml::checkKeys(root, report, isRulePattern)) return true;
  errors.add(1, 1,
             "template expands to more than " + std::to_string(yaml::kMaxNodes) +
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

}  // namespace relay::app
