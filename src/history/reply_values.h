#pragma once

#include <string>
#include <string_view>

#include "redis/errors.h"

namespace relay::history {

/// A reply's integer, or `fallback` for any other reply (the archiver's records are lenient:
/// a field some other version wrote differently reads as absent).
inline long long integerOr(const redis::Result<long long>& value, long long fallback) {
  return value.ok() ? *value : fallback;
}

/// A reply's text, or "" for any other reply.
inline std::string textOf(const redis::Result<std::string_view>& value) {
  return value.ok() ? std::string(*value) : std::string();
}

}  // namespace relay::history
