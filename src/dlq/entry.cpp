#include "dlq/entry.h"

#include <utility>

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
  const std::string* app = entry.record.find("app");
  const std::string* handler = entry.record.find("handler");
  const bool names_handler = app != nullptr && handler != nullptr && !app->empty() &&
                             !handler->empty() && *app != "-" && *handler != "-";
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

bool Entry::replayable() const {
  return kind == DlqKind::kHandler || (kind == DlqKind::kOperator && !app().empty() &&
                                       !handler().empty() && app() != "-" && handler() != "-");
}

std::optional<std::string> Entry::refusal() const {
  if (replayable()) return std::nullopt;
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
