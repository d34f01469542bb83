#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::invocation {

/// One stream entry as delivered: its id and field/value pairs in stream order (binary-safe).
/// The lifecycle's input; the transport (src/stream) reads it and calls it a StreamEntry.
struct Message {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;
  /// True when the entry's body was gone (XREADGROUP of history, XCLAIM): a dangling PEL id.
  bool deleted = false;

  /// The first value of field `name`, or null.
  const std::string* find(std::string_view name) const;
  /// The first value of field `name`, or "" when there is none.
  std::string_view valueOf(std::string_view name) const;
};

}  // namespace relay::invocation
