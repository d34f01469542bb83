#pragma once

#include <nlohmann/json.hpp>

#include "pattern/explain.h"

namespace relay::cli {

/// `{"match": true}` or `{"match": false, "path", "got", "wanted", "reason"}`: the --json form
/// of an explanation for `pattern test` and `app explain`.
nlohmann::ordered_json explanationJson(const pattern::Explanation& explanation);

}  // namespace relay::cli
