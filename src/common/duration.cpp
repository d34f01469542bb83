#include "common/duration.h"

#include <array>
#include <cstdint>
#include <limits>

namespace relay {
namespace {

struct Unit {
  std::string_view name;
  std::int64_t millis;
};

// Descending order; parse requires units to appear in this order, each at most once.
constexpr std::array<Unit, 5> kUnits = {{
    {"d", 86'400'000},
    {"h", 3'600'000},
    {"m", 60'000},
    {"s", 1'000},
    {"ms", 1},
}};

Error badDuration(std::string_view text, std::string_view why) {
  return Error::invalid("invalid duration \"" + std::string(text) + "\": " + std::string(why) +
                        " (expected e.g. 500ms, 90s, 1h30m, 7d)");
}

}  // namespace

Result<Millis> parseDuration(std::string_view text) {
  if (text.empty()) return badDuration(text, "empty");
  if (text == "0") return Millis(0);
  std::int64_t total = 0;
  std::size_t next_unit = 0;  // index into kUnits of the smallest unit still allowed
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t value = 0;
    std::size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
        return badDuration(text, "too large");
      }
      value = value * 10 + (text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) {
      if (text[i] == '-' || text[i] == '+') return badDuration(text, "no sign allowed");
      return badDuration(text, "expected a number at position " + std::to_string(i + 1));
    }
    if (i == text.size()) return badDuration(text, "missing unit after the last number");
    if (text[i] == '.') return badDuration(text, "fractions are not allowed");
    std::size_t unit_end = i;
    while (unit_end < text.size() && text[unit_end] >= 'a' && text[unit_end] <= 'z') ++unit_end;
    const std::string_view unit = text.substr(i, unit_end - i);
    std::size_t found = kUnits.size();
    for (std::size_t u = 0; u < kUnits.size(); ++u) {
      if (kUnits[u].name == unit) found = u;
    }
    if (found == kUnits.size()) {
      if (unit.empty())
        return badDuration(text, "unexpected character at position " + std::to_string(i + 1));
      return badDuration(text, "unknown unit \"" + std::string(unit) + "\"");
    }
    if (found < next_unit) {
      return badDuration(text, "units must be in descending order, each at most once");
    }
    next_unit = found + 1;
    if (value > std::numeric_limits<std::int64_t>::max() / kUnits[found].millis ||
        total > std::numeric_limits<std::int64_t>::max() - value * kUnits[found].millis) {
      return badDuration(text, "too large");
    }
    total += value * kUnits[found].millis;
    i = unit_end;
  }
  return Millis(total);
}

std::string formatDuration(Millis duration) {
  std::int64_t rest = duration.count();
  if (rest == 0) return "0s";
  std::string out;
  if (rest < 0) {
    out = "-";
    rest = -rest;
  }
  for (const Unit& unit : kUnits) {
    if (rest >= unit.millis) {
      out += std::to_string(rest / unit.millis);
      out += unit.name;
      rest %= unit.millis;
    }
  }
  return out;
}

}  // namespace relay
