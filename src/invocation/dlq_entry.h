#pragma once

#include <string>
#include <utility>
#include <vector>

namespace relay::invocation {

/// One dead-letter entry; the fields of events.md "Dead-letter queue", in that order.
struct DlqEntry {
  std::string original_stream;
  std::string original_id;
  std::string group;
  std::string consumer;
  std::string event;   // the raw event value, or a short summary for an oversized one
  std::string reason;  // `exit 3`, `timeout 20s`, `malformed: ...`, `oversized: ...`
  std::string app;     // `-` for a malformed message
  std::string handler;
  long long deliveries = 0;        // the PEL delivery count: diagnostic only
  long long handler_attempts = 0;  // real executions
  std::string timestamp;           // RFC 3339
  std::string trace;               // optional lineage; omitted when empty

  /// Field/value pairs for XADD, in the documented order.
  std::vector<std::pair<std::string, std::string>> fields() const;
};

}  // namespace relay::invocation
