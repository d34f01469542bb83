#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::invocation {

/// Why an entry was dead-lettered (its `kind` field, docs/pipeline.md "Dead-letter entries"): a
/// kHandler entry names a handler that ran and can be replayed, and so can a kOperator entry
/// that names one. The one vocabulary of the entry's kind, written by the lifecycle (and by
/// `relay pending dead-letter`: pending_resolver.cpp) and read back by src/dlq.
enum class DlqKind {
  kHandler,    // exhausted its attempts
  kMalformed,  // not a JSON object event
  kOversized,  // over MAX_EVENT_BYTES
  kSchedule,   // a malformed schedule occurrence
  kPoison,     // its workers died holding it, before it reached a handler
  kOperator,   // an operator dead-lettered a pending message (`relay pending dead-letter`)
};

/// `handler`, `malformed`, `oversized`, `schedule`, `poison`, `operator`: the values of the
/// entry's `kind` field (and the `reason` label of relay_dlq_entries_total).
std::string_view kindName(DlqKind kind);
/// The kind `name` names exactly; nullopt for anything else.
std::optional<DlqKind> parseKind(std::string_view name);

/// One dead-letter entry: the fields of docs/pipeline.md "Dead-letter entries", in that order.
struct DlqEntry {
  std::string original_stream;
  std::string original_id;
  std::string group;
  std::string consumer;
  std::string event;   // the raw event value, or a short summary for an oversized one
  std::string reason;  // `exit 3`, `timeout 20s`, `malformed: ...`, `oversized: ...`
  DlqKind kind = DlqKind::kMalformed;
  std::string app;  // `-` for a malformed message
  std::string handler;
  long long deliveries = 0;        // the PEL delivery count: diagnostic only
  long long handler_attempts = 0;  // real executions
  std::string timestamp;           // RFC 3339
  std::string trace;               // optional lineage; omitted when empty
  std::string exit_reason;         // how the last attempt ended; omitted when empty
  std::string output_tail;         // the last attempt's output tail; omitted when empty
  /// A replay copy's (docs/replay.md): the replay's id and the entry it copied; omitted when
  /// empty.
  std::string replay;
  std::string replay_of;

  /// Field/value pairs for XADD, in the documented order.
  std::vector<std::pair<std::string, std::string>> fields() const;
};

}  // namespace relay::invocation
