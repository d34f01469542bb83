#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "dlq/dlq_filter.h"

namespace relay::console {

using Json = nlohmann::ordered_json;  // as console_state.h

/// Reads one named parameter (of a query string or a JSON object); nullopt when absent.
using ParamGetter = std::function<std::optional<std::string>(std::string_view name)>;

/// The Dead letters filter of docs/console.md: `app`, `handler`, `kind` (exact), `reason`,
/// `q` (substrings, case-insensitive), `since`, `until` (RFC 3339 or Unix milliseconds). Empty
/// values are absent. Fails naming the parameter and what was expected.
Result<dlq::DlqFilter> parseDlqFilter(const ParamGetter& get);

/// A full stream entry id, `<ms>-<seq>` (a bare `<ms>` would name a range).
bool validEntryId(const std::string& id);

/// Decodes a POST body (docs/console.md "JSON API"): its size is capped by the HTTP server,
/// and it must pass the event decoder first (a JSON object, nested at most 64 levels, valid
/// UTF-8, no repeated key: event::decode), so that nothing deeper ever reaches nlohmann's
/// DOM, whose printing and comparison recurse. Fails with what was wrong (the decoder's
/// message and byte offset).
Result<Json> decodeBody(std::string_view body);

/// What a Dead letters mutation (POST /api/dlq/delete, /api/dlq/replay) names: explicit
/// ids, or a filter's selection with its bound and the count the operator saw.
struct SelectionRequest {
  std::vector<std::string> ids;  // when the body names ids
  std::optional<dlq::DlqFilter> filter;
  std::string upto;
  long long expected = 0;
};

/// Parses a mutation body: {"ids": [...]} or {"filter": {...}, "upto": id, "expected": N}.
/// The filter's keys are the documented ones (app, handler, kind, reason, q: strings; since,
/// until: RFC 3339 strings or Unix milliseconds as integers), each a scalar of its type: any
/// other key or type is refused, never turned into text. Pure: touches no Redis. Fails naming
/// the key and what was expected.
Result<SelectionRequest> parseSelection(std::string_view body);

}  // namespace relay::console
