#include "cli/table.h"

#include <algorithm>

namespace relay::cli {

void printTable(std::ostream& out, const std::vector<std::vector<std::string>>& raw_rows) {
  // Cells come from templates, entries and handlers: escaped for the terminal (printable() of
  // what it printed already changes nothing).
  std::vector<std::vector<std::string>> rows;
  for (const auto& raw : raw_rows) {
    std::vector<std::string> row;
    for (const std::string& cell : raw) row.push_back(printable(cell));
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

std::string shorten(std::string_view text, std::size_t width) {
  std::string flat = printable(text);
  if (flat.size() <= width) return flat;
  // Cut on a character boundary: never inside a UTF-8 sequence.
  std::size_t cut = width > 3 ? width - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(flat[cut]) & 0xC0) == 0x80) --cut;
  return flat.substr(0, cut) + "...";
}

}  // namespace relay::cli
