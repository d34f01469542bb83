#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/environment.h"

namespace relay::testing {

/// An Environment that reads `variables` instead of the process environment: a settings
/// loader's test names exactly the variables it sets; every other one is unset.
inline Environment environmentOf(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto found = variables.find(std::string(name));
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

}  // namespace relay::testing
