#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "pattern/pattern.h"

namespace relay::pattern {

/// A pattern file's one YAML document (`relay pattern test --pattern`, `relay replay --filter`,
/// RELAY_ARCHIVE_PATTERN_FILE), read with the checks a template gets: a syntax error, a second
/// document and an alias bomb are refused; duplicate and non-scalar keys are the compiler's to
/// report. The compiled pattern, or every problem as `<shown>:LINE:COL: [path: ]message`.
std::variant<std::shared_ptr<const Pattern>, std::vector<std::string>> compileText(
    const std::string& text, const std::string& shown);

}  // namespace relay::pattern
