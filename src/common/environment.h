#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace relay {

/// Reads one environment variable; nullopt when unset. Settings loaders take one so that tests
/// pass a map instead of the process environment.
using Environment = std::function<std::optional<std::string>(std::string_view name)>;

}  // namespace relay
