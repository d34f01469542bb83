#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace relay {

/// Parses a byte size: a plain number of bytes, or a number followed by B, KiB, MiB or GiB
/// (`256KiB`, `1MiB`). Rejects signs, spaces, fractions, unknown units and overflow.
Result<std::uint64_t> parseSize(std::string_view text);

/// Formats a size with the largest unit that divides it exactly (`256KiB`, `1000B`).
std::string formatSize(std::uint64_t bytes);

}  // namespace relay
