#pragma once

#include <cstddef>
#include <string>

#include "event/event.h"

namespace relay::event {

/// `value` as compact JSON for people (explanations, logs): strings quoted by quoteJson
/// (common/quote_json.h), numbers as written, containers recursively. Longer than `max_bytes`: cut
/// at a UTF-8 boundary and ended with `...`.
std::string render(const Value& value, std::size_t max_bytes = 120);

}  // namespace relay::event
