#include "history/replay_selection.h"

#include <utility>
#include <variant>
#include <vector>

#include "catalog/message_decoder.h"
#include "catalog/replay_copy.h"
#include "pattern/evaluator.h"
#include "pattern/pattern_text.h"
#include "schedule/occurrence.h"
#include "stream/stream_id.h"

namespace relay::history {

Instant instantOfId(const std::string& id) {
  const auto parsed = stream::StreamId::parse(id);
  const auto ms = parsed ? static_cast<std::int64_t>(parsed->ms) : 0;
  return Instant{ms / 1000, static_cast<std::int32_t>(ms % 1000) * 1'000'000};
}

Result<ReplaySelection> ReplaySelection::create(std::shared_ptr<const app::Snapshot> snapshot,
                                                const ReplaySpec& spec,
                                                std::size_t max_event_bytes) {
  ReplaySelection selection;
  selection.app_ = spec.app;
  selection.handler_ = spec.handler;
  selection.max_event_bytes_ = max_event_bytes;
  selection.rules_ = std::make_shared<const catalog::Classifier>(std::move(snapshot));
  const app::AppEntry* entry = selection.rules_->snapshot().find(spec.app);
  if (!entry) return Error::invalid("no app \"" + spec.app + "\" in the apps root");
  if (!entry->app) {
    return Error::invalid(
        "app \"" + spec.app + "\" has no valid template (" +
        (entry->errors.empty() ? std::string("not loaded") : entry->errors.front().toString()) +
        ")");
  }
  if (!spec.handler.empty() && !entry->app->findRule(spec.handler)) {
    return Error::invalid("app \"" + spec.app + "\" has no rule for handler \"" + spec.handler +
                          "\"");
  }
  if (!spec.filter.empty()) {
    auto compiled = pattern::compileText(spec.filter, "--filter");
    if (auto* problems = std::get_if<std::vector<std::string>>(&compiled)) {
      return Error::invalid(problems->front());
    }
    selection.filter_ = std::get<std::shared_ptr<const pattern::Pattern>>(std::move(compiled));
  }
  return selection;
}

bool ReplaySelection::selects(const stream::StreamEntry& original) const {
  if (original.find(schedule::kEnvelopeField) || original.find(catalog::kReplayField)) {
    return false;
  }
  const catalog::DecodedMessage decoded = catalog::decodeMessage(original, max_event_bytes_);
  if (decoded.kind != catalog::DecodedMessage::Kind::kEvent) return false;
  const Instant then = instantOfId(original.id);
  if (filter_ && !pattern::matches(*filter_, *decoded.event, then)) return false;
  for (const catalog::Match& match : rules_->classify(*decoded.event, then)) {
    if (match.entry->name == app_ && (handler_.empty() || match.rule->handler == handler_)) {
      return true;
    }
  }
  return false;
}

}  // namespace relay::history
