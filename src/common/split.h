#pragma once

#include <string_view>
#include <vector>

namespace relay {

/// The pieces of `text` between the `separator`s (an empty text is one empty piece); views
/// into `text`.
inline std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace relay
