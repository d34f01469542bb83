#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "event/event.h"

namespace relay::event {

/// `value` as compact JSON for people (explanations, logs): strings quoted by quoteJson
/// (common/quote_json.h), numbers as written, containers recursively. Longer than `max_bytes`: cut
/// at a UTF-8 boundary and ended with `...`.
std::string render(const Value& value, std::size_t max_bytes = 120);

/// `value` as indented JSON (two spaces a level, `"key": value`), strings quoted by quoteJson,
/// numbers as written, passed to `out` piece by piece: nothing is built whole, and an event is
/// at most kMaxDepth deep, so neither memory nor the stack grows with what a producer wrote.
void renderPretty(const Value& value, const std::function<void(std::string_view)>& out);

}  // namespace relay::event
