#include "pattern/literals.h"

#include <yaml-cpp/yaml.h>

#include <charconv>

#include "yaml/core_schema.h"

namespace relay::pattern {

Result<Literal> literalOf(const YAML::Node& node) {
  Literal literal;
  if (node.IsNull()) return literal;
  const std::string& text = node.Scalar();
  if (!isValidUtf8(text)) {
    return Error::invalid("the scalar is not valid UTF-8, so no event could ever equal it");
  }
  switch (yaml::typeOf(node)) {
    case yaml::Type::kNull:
      return literal;
    case yaml::Type::kBool:
      literal.kind = Literal::Kind::kBool;
      literal.boolean = *yaml::boolValue(node);
      return literal;
    case yaml::Type::kInt:
    case yaml::Type::kFloat: {
      const Result<double> number = yaml::plainNumberValue(text);
      if (!number) return number.error();
      literal.kind = Literal::Kind::kNumber;
      literal.number = *number == 0 ? 0.0 : *number;  // -0 and 0 are one number
      return literal;
    }
    case yaml::Type::kString:
      literal.kind = Literal::Kind::kString;
      literal.string = text;
      return literal;
    case yaml::Type::kMap:
    case yaml::Type::kList:
      return Error::invalid("expected a scalar, got " + yaml::describe(node));
    case yaml::Type::kTagged:
      break;
  }
  return Error::invalid("unsupported YAML tag \"" + node.Tag() +
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
