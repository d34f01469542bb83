#pragma once

#include <string_view>

namespace relay::app {

/// The charset of app and schedule names, for messages.
inline constexpr std::string_view kNamePattern = "[a-z0-9][a-z0-9_-]{0,62}";

/// Whether `name` matches kNamePattern (1..63 bytes; lowercase letters, digits, `_`, `-`; not
/// starting with `_` or `-`). App names appear in Redis keys and invocation ids, so the set is
/// deliberately narrow.
bool isValidName(std::string_view name);

/// Whether `name` can be an environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
bool isValidEnvName(std::string_view name);

}  // namespace relay::app
