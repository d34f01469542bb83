#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace relay::cli {

/// Prints rows (the first is the header) as left-aligned columns two spaces apart, without
/// trailing blanks.
void printTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

/// `text` safe for a terminal: control bytes and bytes that are not valid UTF-8 become `\xNN`;
/// newlines and tabs are kept only when `keep_newlines`.
std::string printable(std::string_view text, bool keep_newlines = false);

/// At most `width` characters of printable(text) on one line, `...` marking a cut.
std::string shorten(std::string_view text, std::size_t width);

}  // namespace relay::cli
