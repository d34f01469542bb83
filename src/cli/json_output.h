#pragma once

#include <string>

namespace relay::cli {

/// The `--json` form of a document (nlohmann::json or ordered_json): two-space indent, and
/// invalid UTF-8 in a string (an event's bytes, a handler's output) printed as U+FFFD instead
/// of failing the command.
template <typename Document>
std::string prettyJson(const Document& json) {
  return json.dump(2, ' ', false, Document::error_handler_t::replace);
}

}  // namespace relay::cli
