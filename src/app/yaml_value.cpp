#include "app/yaml_value.h"

#include <array>
#include <charconv>
#include <cmath>

namespace relay::app {
namespace {

bool isPlain(const YAML::Node& node) { return node.Tag() == "?"; }

bool oneOf(std::string_view text, std::initializer_list<std::string_view> options) {
  for (const std::string_view option : options) {
    if (text == option) return true;
  }
  return false;
}

bool isDigits(std::string_view text, bool hex = false, bool octal = false) {
  if (text.empty()) return false;
  for (const char c : text) {
    const bool digit = octal ? (c >= '0' && c <= '7') : (c >= '0' && c <= '9');
    const bool hex_letter = hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
    if (!digit && !hex_letter) return false;
  }
  return true;
}

std::optional<std::int64_t> parsePlainInt(std::string_view text) {
  int base = 10;
  bool negative = false;
  std::string_view digits = text;
  if (text.starts_with("0x")) {
    base = 16;
    digits = text.substr(2);
    if (!isDigits(digits, /*hex=*/true)) return std::nullopt;
  } else if (text.starts_with("0o")) {
    base = 8;
    digits = text.substr(2);
    if (!isDigits(digits, false, /*octal=*/true)) return std::nullopt;
  } else {
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
      negative = digits.front() == '-';
      digits.remove_prefix(1);
    }
    if (!isDigits(digits)) return std::nullopt;
  }
  std::uint64_t magnitude = 0;
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  if (negative) {
    if (magnitude > static_cast<std::uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<std::int64_t>(0 - magnitude);
  }
  if (magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<std::int64_t>(magnitude);
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool isPlainFloat(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  std::size_t int_digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++int_digits;
  std::size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    std::size_t exp_digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == text.size();
}

bool isSpecialFloat(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return oneOf(text, {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"});
}

bool isPlainInt(std::string_view text) {
  if (text.starts_with("0x")) return isDigits(text.substr(2), true);
  if (text.starts_with("0o")) return isDigits(text.substr(2), false, true);
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return isDigits(text);
}

}  // namespace

YamlType yamlType(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return YamlType::kNull;
    case YAML::NodeType::Sequence:
      return YamlType::kList;
    case YAML::NodeType::Map:
      return YamlType::kMap;
    case YAML::NodeType::Scalar:
      break;
  }
  if (node.Tag() == "!") return YamlType::kString;
  if (!isPlain(node)) return YamlType::kTagged;
  const std::string& text = node.Scalar();
  if (oneOf(text, {"true", "True", "TRUE", "false", "False", "FALSE"})) return YamlType::kBool;
  if (isPlainInt(text)) return YamlType::kInt;
  if (isPlainFloat(text) || isSpecialFloat(text)) return YamlType::kFloat;
  return YamlType::kString;
}

std::string describeYaml(const YAML::Node& node) {
  switch (yamlType(node)) {
    case YamlType::kNull:
      return "no value (null)";
    case YamlType::kBool:
      return "the boolean " + node.Scalar();
    case YamlType::kInt:
      return "the integer " + node.Scalar();
    case YamlType::kFloat:
      return "the number " + node.Scalar();
    case YamlType::kString:
      return "the string \"" + node.Scalar() + "\"";
    case YamlType::kMap:
      return "a map";
    case YamlType::kList:
      return "a list";
    case YamlType::kTagged:
      return "a value tagged " + node.Tag();
  }
  return "a value";
}

std::optional<std::int64_t> yamlInt(const YAML::Node& node) {
  if (yamlType(node) != YamlType::kInt) return std::nullopt;
  return parsePlainInt(node.Scalar());
}

std::optional<double> yamlNumber(const YAML::Node& node) {
  const YamlType type = yamlType(node);
  if (type == YamlType::kInt) {
    if (const auto value = parsePlainInt(node.Scalar())) return static_cast<double>(*value);
    // Integers beyond int64 are still numbers.
  } else if (type != YamlType::kFloat) {
    return std::nullopt;
  }
  std::string_view text = node.Scalar();
  if (isSpecialFloat(text)) return std::nullopt;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);  // from_chars takes no '+'
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<bool> yamlBool(const YAML::Node& node) {
  if (yamlType(node) != YamlType::kBool) return std::nullopt;
  return node.Scalar().front() != 'f' && node.Scalar().front() != 'F';
}

bool isYaml11Boolean(const YAML::Node& node) {
  if (!node.IsScalar() || !isPlain(node)) return false;
  return oneOf(node.Scalar(), {"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off",
                               "Off", "OFF", "y", "Y", "n", "N"});
}

int yamlLine(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 1;
}

int yamlColumn(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.column >= 0 ? mark.column + 1 : 1;
}

}  // namespace relay::app
