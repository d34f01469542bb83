#include "dlq/dlq_kind.h"

#include <string>

#include "common/whole_number.h"
#include "invocation/dlq_entry.h"

namespace relay::dlq {

std::string_view kindName(DlqKind kind) {
  switch (kind) {
    case DlqKind::kHandler:
      return invocation::kDlqKindHandler;
    case DlqKind::kMalformed:
      return invocation::kDlqKindMalformed;
    case DlqKind::kOversized:
      return invocation::kDlqKindOversized;
    case DlqKind::kSchedule:
      return invocation::kDlqKindSchedule;
  }
  return invocation::kDlqKindMalformed;
}

std::optional<DlqKind> parseKind(std::string_view name) {
  for (DlqKind kind :
       {DlqKind::kHandler, DlqKind::kMalformed, DlqKind::kOversized, DlqKind::kSchedule}) {
    if (kindName(kind) == name) return kind;
  }
  return std::nullopt;
}

DlqKind kindOf(const stream::StreamEntry& entry) {
  const std::string* app = entry.find("app");
  const std::string* handler = entry.find("handler");
  const bool names_handler = app != nullptr && handler != nullptr && !app->empty() &&
                             !handler->empty() && *app != "-" && *handler != "-";
  if (const std::string* recorded = entry.find("kind")) {
    // An unknown kind (a newer Relay's) is not replayable either, and neither is a `handler`
    // entry that names no handler.
    const DlqKind kind = parseKind(*recorded).value_or(DlqKind::kMalformed);
    return kind == DlqKind::kHandler && !names_handler ? DlqKind::kMalformed : kind;
  }
  const std::string* attempts = entry.find("handler_attempts");
  const long long count = attempts != nullptr ? leadingWholeNumber<long long>(*attempts) : 0;
  return names_handler && count > 0 ? DlqKind::kHandler : DlqKind::kMalformed;
}

}  // namespace relay::dlq
