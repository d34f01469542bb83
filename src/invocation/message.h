#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::invocation {

/// Items (field names and values) of one message a read keeps (redis::ReplyLimits); past them
/// the message is oversized (docs/operations.md "Memory").
inline constexpr std::size_t kMaxMessageItems = 4096;
/// The first bytes a value cut by a read keeps (the DLQ shows them).
inline constexpr std::size_t kKeptValueBytes = 256;

/// One stream entry as delivered: its id and field/value pairs in stream order (binary-safe).
/// The lifecycle's input; the transport (src/stream) reads it and calls it a StreamEntry.
struct Message {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;
  /// True when the entry's body was gone (XREADGROUP of history, XCLAIM): a dangling PEL id.
  bool deleted = false;
  /// Values (or names) the read cut to their first bytes (redis::ReplyLimits, docs/operations.md
  /// "Memory"): the field's name as read and the value's true length. A message with any is
  /// oversized: never run, dead-lettered with what was kept.
  std::vector<std::pair<std::string, std::uint64_t>> cut = {};
  /// How many field and value items the entry had when the read dropped some (past the
  /// limits' element count); 0 when none were.
  std::uint64_t items_when_dropped = 0;

  /// The first value of field `name`, or null.
  const std::string* find(std::string_view name) const;
  /// The first value of field `name`, or "" when there is none.
  std::string_view valueOf(std::string_view name) const;
};

}  // namespace relay::invocation
