#include "invocation/dlq_entry.h"

#include "common/enum_names.h"

namespace relay::invocation {

// The values of the entry's `kind` field.
constexpr EnumNames<DlqKind, 6> kKindNames = {{{
    {DlqKind::kHandler, "handler"},
    {DlqKind::kMalformed, "malformed"},
    {DlqKind::kOversized, "oversized"},
    {DlqKind::kSchedule, "schedule"},
    {DlqKind::kPoison, "poison"},
    {DlqKind::kOperator, "operator"},
}}};

std::string_view kindName(DlqKind kind) { return kKindNames.name(kind); }

std::optional<DlqKind> parseKind(std::string_view name) { return kKindNames.parse(name); }

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
  if (!replay.empty()) out.emplace_back("replay", replay);
  if (!replay_of.empty()) out.emplace_back("replay_of", replay_of);
  return out;
}

}  // namespace relay::invocation
