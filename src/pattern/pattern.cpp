#include "pattern/pattern.h"

#include "common/quote_json.h"
#include "pattern/literals.h"

namespace relay::pattern {
namespace {

// The now()-offset syntax: h, m, s, ms (no days, which the pattern language does not accept).
std::string formatOffset(std::chrono::milliseconds offset) {
  std::int64_t left = offset.count();
  std::string out;
  for (const auto& [unit, millis] : {std::pair<const char*, std::int64_t>{"h", 3'600'000},
                                     {"m", 60'000},
                                     {"s", 1'000},
                                     {"ms", 1}}) {
    if (left >= millis) {
      out += std::to_string(left / millis) + unit;
      left %= millis;
    }
  }
  return out;
}

void render(const std::vector<Field>& fields, std::string& out);

void render(const Alternative& alternative, std::string& out) {
  if (const auto* literal = std::get_if<Literal>(&alternative)) {
    switch (literal->kind) {
      case Literal::Kind::kString:
        out += quoteJson(literal->string);
        break;
      case Literal::Kind::kNumber:
        out += formatNumber(literal->number);
        break;
      case Literal::Kind::kBool:
        out += literal->boolean ? "true" : "false";
        break;
      case Literal::Kind::kNull:
        out += "null";
        break;
    }
  } else if (const auto* prefix = std::get_if<Prefix>(&alternative)) {
    out += "{prefix: " + quoteJson(prefix->value) + "}";
  } else if (const auto* suffix = std::get_if<Suffix>(&alternative)) {
    out += "{suffix: " + quoteJson(suffix->value) + "}";
  } else if (const auto* exists = std::get_if<Exists>(&alternative)) {
    out += exists->present ? "{exists: true}" : "{exists: false}";
  } else if (const auto* comparison = std::get_if<Comparison>(&alternative)) {
    static constexpr const char* kNames[] = {"gt", "gte", "lt", "lte"};
    out += "{" + std::string(kNames[static_cast<int>(comparison->op)]) + ": ";
    if (!comparison->temporal) {
      out += formatNumber(comparison->number);
    } else if (comparison->offset.count() == 0) {
      out += "\"now()\"";
    } else {
      const bool minus = comparison->offset.count() < 0;
      out += "\"now()" + std::string(minus ? "-" : "+") +
             formatOffset(minus ? -comparison->offset : comparison->offset) + "\"";
    }
    out += "}";
  } else {
    render(std::get<Nested>(alternative).fields, out);
  }
}

void render(const std::vector<Field>& fields, std::string& out) {
  out += "{";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ", ";
    out += quoteJson(fields[i].name) + ": [";
    for (std::size_t j = 0; j < fields[i].alternatives.size(); ++j) {
      if (j > 0) out += ", ";
      render(fields[i].alternatives[j], out);
    }
    out += "]";
  }
  out += "}";
}

}  // namespace

std::string toString(const Alternative& alternative) {
  std::string out;
  render(alternative, out);
  return out;
}

std::string Pattern::toString() const {
  std::string out;
  render(fields_, out);
  return out;
}

}  // namespace relay::pattern
