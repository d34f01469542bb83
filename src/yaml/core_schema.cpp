#include "yaml/core_schema.h"

#include <charconv>
#include <cmath>
#include <initializer_list>

#include "common/whole_number.h"

namespace relay::yaml {
namespace {

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool oneOf(std::string_view text, std::initializer_list<std::string_view> words) {
  for (const std::string_view word : words) {
    if (text == word) return true;
  }
  return false;
}

// `prefix` followed by at least one digit of `base` (8 or 16).
bool isRadixInt(std::string_view text, std::string_view prefix, int base) {
  if (text.size() <= prefix.size() || !text.starts_with(prefix)) return false;
  for (const char c : text.substr(prefix.size())) {
    const bool ok = base == 16 ? (isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
                               : (c >= '0' && c <= '7');
    if (!ok) return false;
  }
  return true;
}

// [-+]? [0-9]+
bool isDecimalInt(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  if (text.empty()) return false;
  for (const char c : text) {
    if (!isDigit(c)) return false;
  }
  return true;
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool isDecimalFloat(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  std::size_t int_digits = 0;
  while (i < text.size() && isDigit(text[i])) ++i, ++int_digits;
  std::size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && isDigit(text[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    std::size_t exp_digits = 0;
    while (i < text.size() && isDigit(text[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == text.size();
}

// [-+]? ( \.inf | \.Inf | \.INF ) and ( \.nan | \.NaN | \.NAN ), which takes no sign.
bool isSpecialFloat(std::string_view text) {
  if (oneOf(text, {".nan", ".NaN", ".NAN"})) return true;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return oneOf(text, {".inf", ".Inf", ".INF"});
}

Error notANumber(std::string_view text) {
  return Error::invalid("\"" + std::string(text) + "\" is not a number");
}

Result<double> radixValue(std::string_view text, int base) {
  const std::string_view digits = text.substr(2);
  std::uint64_t value = 0;
  if (!parseWholeNumber(digits, value, base)) {
    return Error::invalid("number " + std::string(text) + " is out of range (at most 64 bits)");
  }
  return static_cast<double>(value);
}

}  // namespace

Type plainType(std::string_view text) {
  if (oneOf(text, {"null", "Null", "NULL", "~", ""})) return Type::kNull;
  if (oneOf(text, {"true", "True", "TRUE", "false", "False", "FALSE"})) return Type::kBool;
  if (isDecimalInt(text) || isRadixInt(text, "0x", 16) || isRadixInt(text, "0o", 8)) {
    return Type::kInt;
  }
  if (isDecimalFloat(text) || isSpecialFloat(text)) return Type::kFloat;
  return Type::kString;
}

Type typeOf(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return Type::kNull;
    case YAML::NodeType::Sequence:
      return Type::kList;
    case YAML::NodeType::Map:
      return Type::kMap;
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& tag = node.Tag();
  if (tag == "?") return plainType(node.Scalar());
  if (tag == "!" || tag == kStrTag) return Type::kString;
  return Type::kTagged;
}

Result<double> plainNumberValue(std::string_view text) {
  const Type type = plainType(text);
  if (type != Type::kInt && type != Type::kFloat) return notANumber(text);
  if (isSpecialFloat(text)) {
    return Error::invalid("number " + std::string(text) +
                          " is not finite; only finite numbers are supported");
  }
  if (isRadixInt(text, "0x", 16)) return radixValue(text, 16);
  if (isRadixInt(text, "0o", 8)) return radixValue(text, 8);
  std::string_view digits = text;
  if (digits.front() == '+') digits.remove_prefix(1);  // from_chars takes no '+'
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  // from_chars reports overflow and underflow alike; an underflow rounding to zero is not what
  // the author wrote either.
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && !std::isfinite(value))) {
    return Error::invalid("number " + std::string(text) + " is out of range of a double");
  }
  if (ec != std::errc() || end != digits.data() + digits.size()) return notANumber(text);
  return value;
}

Result<double> numberValue(const YAML::Node& node) {
  const Type type = typeOf(node);
  if (type != Type::kInt && type != Type::kFloat)
    return Error::invalid(describe(node) + " is not a number");
  return plainNumberValue(node.Scalar());
}

std::optional<std::int64_t> intValue(const YAML::Node& node) {
  if (typeOf(node) != Type::kInt) return std::nullopt;
  std::string_view text = node.Scalar();
  int base = 10;
  bool negative = false;
  if (isRadixInt(text, "0x", 16) || isRadixInt(text, "0o", 8)) {
    base = text[1] == 'x' ? 16 : 8;
    text.remove_prefix(2);
  } else if (text.front() == '-' || text.front() == '+') {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  std::uint64_t magnitude = 0;
  if (!parseWholeNumber(text, magnitude, base)) return std::nullopt;
  if (negative) {
    if (magnitude > static_cast<std::uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<std::int64_t>(0 - magnitude);
  }
  if (magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<std::int64_t>(magnitude);
}

std::optional<bool> boolValue(const YAML::Node& node) {
  if (typeOf(node) != Type::kBool) return std::nullopt;
  return node.Scalar().front() == 't' || node.Scalar().front() == 'T';
}

bool isYaml11Boolean(const YAML::Node& node) {
  if (!node.IsScalar() || node.Tag() != "?") return false;
  return oneOf(node.Scalar(), {"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off",
                               "Off", "OFF", "y", "Y", "n", "N"});
}

std::string describe(const YAML::Node& node) {
  switch (typeOf(node)) {
    case Type::kNull:
      return "no value (null)";
    case Type::kBool:
      return "the boolean " + node.Scalar();
    case Type::kInt:
      return "the integer " + node.Scalar();
    case Type::kFloat:
      return "the number " + node.Scalar();
    case Type::kString:
      return "the string \"" + node.Scalar() + "\"";
    case Type::kMap:
      return "a map";
    case Type::kList:
      return "a list";
    case Type::kTagged:
      return "a value tagged " + node.Tag();
  }
  return "a value";
}

int line(const YAML::Node& node) {
  const YAML::Mark mark = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
  return mark.line >= 0 ? mark.line + 1 : 1;
}

int column(const YAML::Node& node) {
  const YAML::Mark mark = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
  return mark.column >= 0 ? mark.column + 1 : 1;
}

}  // namespace relay::yaml
