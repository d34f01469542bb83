#pragma once

#include <cstddef>
#include <string>

#include "event/event.h"

namespace relay::event {

/// `value` as compact JSON for people (explanations, logs): strings JSON-escaped (UTF-8 kept),
/// numbers as written, containers recursively. Longer than `max_bytes`: cut at a UTF-8
/// boundary and ended with `...`.
std::string render(const Value& value, std::size_t max_bytes = 120);

/// A JSON string literal of `text`: quotes, `\"`, `\\`, `\n`, `\t`, `\u00XX` for the other
/// control characters; other bytes as they are.
std::string quoteJson(std::string_view text);

}  // namespace relay::event
