#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace relay::pattern {

enum class OperatorName { kPrefix, kSuffix, kExists, kGt, kGte, kLt, kLte };

/// The operator a map key names exactly (`prefix`, ..., `lte`), if any.
std::optional<OperatorName> operatorNamed(std::string_view key);

/// The spelling of an operator (`gte`).
std::string_view operatorSpelling(OperatorName name);

/// For a key that is not an operator but looks like one was meant — a different case
/// (`Prefix`), a typo one or two edits away (`prefx`, `exsits`), or an operator of another
/// pattern language (`equals`, `anything-but`, `ge`) — a hint naming what to write instead.
std::optional<std::string> misspelledOperatorHint(std::string_view key);

}  // namespace relay::pattern
