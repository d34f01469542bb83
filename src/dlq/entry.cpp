#include "dlq/entry.h"

#include <utility>

#include "catalog/message_decoder.h"
#include "common/whole_number.h"

namespace relay::dlq {
namespace {

std::string shortened(std::string_view text, std::size_t width = 60) {
  if (text.size() > width) return std::string(text.substr(0, width - 3)) + "...";
  return std::string(text);
}

}  // namespace

Entry Entry::from(invocation::Message record) {
  Entry entry;
  entry.record = std::move(record);
  entry.handler_attempts = leadingWholeNumber<long long>(entry.record.valueOf("handler_attempts"));
  const bool names_handler = entry.namesHandler();
  if (const std::string* recorded = entry.record.find("kind")) {
    // An unknown kind (a newer Relay's) is not replayable either, and neither is a `handler`
    // entry that names no handler.
    const DlqKind kind = parseKind(*recorded).value_or(DlqKind::kMalformed);
    entry.kind = kind == DlqKind::kHandler && !names_handler ? DlqKind::kMalformed : kind;
  } else {
    entry.kind =
        names_handler && entry.handler_attempts > 0 ? DlqKind::kHandler : DlqKind::kMalformed;
  }
  return entry;
}

bool Entry::namesHandler() const {
  const std::string* app_name = record.find("app");
  const std::string* handler_name = record.find("handler");
  return app_name != nullptr && handler_name != nullptr && !app_name->empty() &&
         !handler_name->empty() && *app_name != "-" && *handler_name != "-";
}

bool Entry::replayable() const { return refusal() == std::nullopt; }

std::optional<std::string> Entry::refusal() const {
  if (!record.cut.empty() || record.items_when_dropped > 0) {
    // Only the first bytes of a value were read (docs/operations.md "Memory"): replaying them
    // would run the handler on something else than what was dead-lettered.
    return "entry " + id() + " holds more than a reader keeps (a value of " +
           std::to_string(record.cut.empty() ? 0 : record.cut.front().second) +
           " bytes, or too many fields): it cannot be replayed; inspect it and remove it";
  }
  if (kind == DlqKind::kHandler) return std::nullopt;
  // An invocation an operator dead-lettered (relay pending dead-letter) names its handler when
  // the message had a plan: that handler can run it again.
  if (kind == DlqKind::kOperator && namesHandler()) return std::nullopt;
  if (kind == DlqKind::kSchedule && namesHandler()) {
    // An occurrence set apart before it ran (an edited cron, a payload that disagrees with its
    // envelope) whose schedule was known: its handler can run it, as any replay, with the
    // recorded event, provided that is one (a JSON object, not an oversized one's summary).
    const invocation::Message recorded{id(), {{"event", std::string(event())}}};
    if (catalog::decodeMessage(recorded, catalog::kMaxEventBytesCeiling).kind ==
        catalog::DecodedMessage::Kind::kEvent) {
      return std::nullopt;
    }
    return "entry " + id() + " records a schedule occurrence (" + shortened(reason()) +
           ") whose recorded event is not a JSON object its handler could read: there is "
           "nothing to replay; inspect it and remove it";
  }
  const std::string what = kind == DlqKind::kOversized  ? "an oversized message"
                           : kind == DlqKind::kSchedule ? "a malformed schedule occurrence"
                           : kind == DlqKind::kPoison   ? "a message its workers died holding"
                           : kind == DlqKind::kOperator
                               ? "a message an operator dead-lettered before it had a plan"
                               : "a malformed message";
  return "entry " + id() + " records " + what + " that never reached a handler (" +
         shortened(reason()) + "): there is nothing to replay; inspect it and remove it";
}

}  // namespace relay::dlq
