#include "pattern/scalar_typing.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

namespace relay::pattern {
namespace {

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool isOneOf(std::string_view text, std::initializer_list<std::string_view> words) {
  for (const std::string_view word : words) {
    if (text == word) return true;
  }
  return false;
}

// YAML 1.2 core schema float: [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
// (integers are the same language without fraction and exponent).
bool isDecimalNumber(std::string_view text) {
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

bool isRadixNumber(std::string_view text, std::string_view prefix, int base) {
  if (text.size() <= prefix.size() || text.substr(0, prefix.size()) != prefix) return false;
  for (const char c : text.substr(prefix.size())) {
    const bool ok = base == 16 ? (isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
                               : (c >= '0' && c <= '7');
    if (!ok) return false;
  }
  return true;
}

Result<Literal> numberLiteral(double value, std::string_view text) {
  if (!std::isfinite(value)) {
    return Error::invalid("number " + std::string(text) + " is out of range of a double");
  }
  Literal literal;
  literal.kind = Literal::Kind::kNumber;
  literal.number = value == 0 ? 0.0 : value;  // -0 and 0 are one number
  return literal;
}

Result<Literal> parseRadix(std::string_view text, std::string_view digits, int base) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return Error::invalid("number " + std::string(text) + " is out of range (at most 64 bits)");
  }
  return numberLiteral(static_cast<double>(value), text);
}

}  // namespace

Result<Literal> typePlainScalar(std::string_view text) {
  Literal literal;
  if (isOneOf(text, {"null", "Null", "NULL", "~", ""})) return literal;
  if (isOneOf(text, {"true", "True", "TRUE"})) {
    literal.kind = Literal::Kind::kBool;
    literal.boolean = true;
    return literal;
  }
  if (isOneOf(text, {"false", "False", "FALSE"})) {
    literal.kind = Literal::Kind::kBool;
    return literal;
  }
  if (isDecimalNumber(text)) {
    std::string_view digits = text;
    if (digits.front() == '+') digits.remove_prefix(1);
    double value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // from_chars reports both overflow and underflow; an underflow is a tiny number, which
      // strtod-like rounding turns into zero, but a pattern author meant something else.
      return Error::invalid("number " + std::string(text) + " is out of range of a double");
    }
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      return Error::invalid("cannot read number " + std::string(text));
    }
    return numberLiteral(value, text);
  }
  if (isRadixNumber(text, "0x", 16)) return parseRadix(text, text.substr(2), 16);
  if (isRadixNumber(text, "0o", 8)) return parseRadix(text, text.substr(2), 8);
  if (isOneOf(text, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                     ".nan", ".NaN", ".NAN"})) {
    return Error::invalid("number " + std::string(text) +
                          " is not finite; only finite numbers can be matched");
  }
  literal.kind = Literal::Kind::kString;
  literal.string = std::string(text);
  return literal;
}

Result<Literal> typeScalar(const YAML::Node& node) {
  if (node.IsNull()) return Literal{};
  const std::string& tag = node.Tag();
  const std::string& text = node.Scalar();
  if (!isValidUtf8(text)) {
    return Error::invalid("the scalar is not valid UTF-8, so no event could ever equal it");
  }
  if (tag == "?") return typePlainScalar(text);
  if (tag == "!" || tag == kStrTag) {
    Literal literal;
    literal.kind = Literal::Kind::kString;
    literal.string = text;
    return literal;
  }
  return Error::invalid("unsupported YAML tag \"" + tag +
                        "\"; write plain or quoted scalars (quoted ones are strings)");
}

bool isValidUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    unsigned low = 0x80, high = 0xBF;
    std::size_t length;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xBF)) return false;
    }
    i += length;
  }
  return true;
}

std::string formatNumber(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("?");
}

std::string describeLiteral(const Literal& literal) {
  switch (literal.kind) {
    case Literal::Kind::kString:
      return "string \"" + literal.string + "\"";
    case Literal::Kind::kNumber:
      return "number " + formatNumber(literal.number);
    case Literal::Kind::kBool:
      return literal.boolean ? "boolean true" : "boolean false";
    case Literal::Kind::kNull:
      return "null";
  }
  return "?";
}

}  // namespace relay::pattern
