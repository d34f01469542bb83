#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::invocation {

/// Why an entry was dead-lettered (its `kind` field, docs/pipeline.md): only a `handler` entry
/// names a handler that ran and can be replayed.
inline constexpr std::string_view kDlqKindHandler = "handler";      // exhausted its attempts
inline constexpr std::string_view kDlqKindMalformed = "malformed";  // not a JSON object event
inline constexpr std::string_view kDlqKindOversized = "oversized";  // over MAX_EVENT_BYTES
inline constexpr std::string_view kDlqKindSchedule = "schedule";    // a malformed occurrence

/// One dead-letter entry: the fields of docs/pipeline.md "Dead-letter entries", in that order.
struct DlqEntry {
  std::string original_stream;
  std::string original_id;
  std::string group;
  std::string consumer;
  std::string event;   // the raw event value, or a short summary for an oversized one
  std::string reason;  // `exit 3`, `timeout 20s`, `malformed: ...`, `oversized: ...`
  std::string kind;    // one of the kDlqKind* names
  std::string app;     // `-` for a malformed message
  std::string handler;
  long long deliveries = 0;        // the PEL delivery count: diagnostic only
  long long handler_attempts = 0;  // real executions
  std::string timestamp;           // RFC 3339
  std::string trace;               // optional lineage; omitted when empty
  std::string exit_reason;         // how the last attempt ended; omitted when empty
  std::string output_tail;         // the last attempt's output tail; omitted when empty

  /// Field/value pairs for XADD, in the documented order.
  std::vector<std::pair<std::string, std::string>> fields() const;
};

}  // namespace relay::invocation
