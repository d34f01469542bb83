#pragma once

#include <string>
#include <string_view>

namespace relay::redis {

/// The SHA-1 of `data` as 40 lowercase hex digits: the name Redis gives a Lua script for
/// EVALSHA. Used for script identity only, never for security.
std::string sha1Hex(std::string_view data);

}  // namespace relay::redis
