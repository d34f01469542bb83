#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/printable.h"

namespace relay::cli {

/// Prints rows (the first is the header) as left-aligned columns two spaces apart, without
/// trailing blanks, every cell through printable(): control and bidirectional characters
/// escaped.
void printTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

/// At most `width` characters of printable(text) on one line, `...` marking a cut.
std::string shorten(std::string_view text, std::size_t width);

}  // namespace relay::cli
