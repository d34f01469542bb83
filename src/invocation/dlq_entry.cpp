#include "invocation/dlq_entry.h"

namespace relay::invocation {

std::string_view kindName(DlqKind kind) {
  switch (kind) {
    case DlqKind::kHandler:
      return "handler";
    case DlqKind::kMalformed:
      return "malformed";
    case DlqKind::kOversized:
      return "oversized";
    case DlqKind::kSchedule:
      return "schedule";
  }
  return "malformed";
}

std::optional<DlqKind> parseKind(std::string_view name) {
  for (DlqKind kind :
       {DlqKind::kHandler, DlqKind::kMalformed, DlqKind::kOversized, DlqKind::kSchedule}) {
    if (kindName(kind) == name) return kind;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> DlqEntry::fields() const {
  std::vector<std::pair<std::string, std::string>> out = {
      {"original_stream", original_stream},
      {"original_id", original_id},
      {"group", group},
      {"consumer", consumer},
      {"event", event},
      {"reason", reason},
      {"kind", std::string(kindName(kind))},
      {"app", app},
      {"handler", handler},
      {"deliveries", std::to_string(deliveries)},
      {"handler_attempts", std::to_string(handler_attempts)},
      {"timestamp", timestamp},
  };
  if (!trace.empty()) out.emplace_back("trace", trace);
  if (!exit_reason.empty()) out.emplace_back("exit_reason", exit_reason);
  if (!output_tail.empty()) out.emplace_back("output_tail", output_tail);
  return out;
}

}  // namespace relay::invocation
