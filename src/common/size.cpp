#include "common/size.h"

#include <array>
#include <limits>

namespace relay {
namespace {

struct SizeUnit {
  std::string_view name;
  std::uint64_t bytes;
};

constexpr std::array<SizeUnit, 4> kSizeUnits = {{
    {"GiB", 1ULL << 30},
    {"MiB", 1ULL << 20},
    {"KiB", 1ULL << 10},
    {"B", 1},
}};

Error badSize(std::string_view text, std::string_view why) {
  return Error::invalid("invalid size \"" + std::string(text) + "\": " + std::string(why) +
                        " (expected bytes or a number with B, KiB, MiB, GiB, e.g. 256KiB)");
}

}  // namespace

Result<std::uint64_t> parseSize(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (value > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) {
      return badSize(text, "too large");
    }
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    ++i;
  }
  if (i == 0) return badSize(text, text.empty() ? "empty" : "expected a number first");
  const std::string_view unit = text.substr(i);
  if (unit.empty()) return value;
  for (const SizeUnit& candidate : kSizeUnits) {
    if (candidate.name == unit) {
      if (value > std::numeric_limits<std::uint64_t>::max() / candidate.bytes) {
        return badSize(text, "too large");
      }
      return value * candidate.bytes;
    }
  }
  return badSize(text, "unknown unit \"" + std::string(unit) + "\"");
}

std::string formatSize(std::uint64_t bytes) {
  for (const SizeUnit& unit : kSizeUnits) {
    if (bytes != 0 && bytes % unit.bytes == 0)
      return std::to_string(bytes / unit.bytes) + std::string(unit.name);
  }
  return "0B";
}

}  // namespace relay
