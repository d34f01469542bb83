#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "dlq/entry.h"

namespace relay::dlq {

/// Which dead-letter entries an operator means (`relay console`'s Dead letters page, its bulk
/// actions). Every set member narrows the selection; the default selects every entry.
struct DlqFilter {
  std::string app = {};              // exact app name; empty: any
  std::string handler = {};          // exact handler name; empty: any
  std::optional<DlqKind> kind = {};  // the entry's kind (Entry::from); none: any
  std::string reason = {};           // substring of the reason, ASCII case-insensitive; empty: any
  std::string text = {};  // substring of the recorded event, ASCII case-insensitive; empty: any
  std::optional<std::int64_t> since_ms =
      {};  // entries written at or after (Unix ms; the id's time)
  std::optional<std::int64_t> until_ms = {};  // entries written at or before

  /// Whether `entry` is selected. Its time is the millisecond part of its id (the DLQ write).
  bool matches(const Entry& entry) const;
  /// The XREVRANGE bounds the time range implies: the newest and the oldest id to read.
  std::string newestBound() const;
  std::string oldestBound() const;

  /// The filter as a JSON object with the console's parameter names (app, handler, kind,
  /// reason, q, since, until as Unix ms): how a bulk replay records its selection
  /// (docs/replay.md "Dead letters").
  std::string toJson() const;
  /// The inverse of toJson(); kInvalidArgument for anything else.
  static Result<DlqFilter> fromJson(std::string_view json);
};

/// ASCII case-insensitive substring search (bytes outside A-Z compare as they are, so any
/// UTF-8 or binary text is searched byte for byte).
bool containsIgnoringCase(std::string_view haystack, std::string_view needle);

}  // namespace relay::dlq
