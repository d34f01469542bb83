#include "console/dlq_api.h"

#include "common/rfc3339.h"
#include "common/whole_number.h"
#include "console/console_guard.h"
#include "console/request_body.h"
#include "dlq/dead_letter_queue.h"
#include "dlq/replayer.h"
#include "event/event.h"
#include "event/render.h"
#include "stream/stream_id.h"

namespace relay::console {
namespace {

using http::HttpReply;
using http::HttpRequest;

constexpr std::size_t kDefaultDlqLimit = 50;
constexpr std::size_t kMaxDlqLimit = 500;

// The ids a mutation's body names: explicit ids, or a filter's selection confirmed with its
// bound and the count the operator saw. A selection that no longer has that count is refused
// (409).
std::variant<std::vector<std::string>, HttpReply> selectionOf(ConsoleState& state,
                                                              redis::Connection& redis,
                                                              const HttpRequest& request) {
  auto parsed = parseSelection(request.body);
  if (!parsed.ok()) return jsonError(400, parsed.error().message);
  if (!parsed->filter) return std::move(parsed->ids);
  auto selection = deadLetters(state, redis).select(*parsed->filter, parsed->upto);
  if (!selection.ok()) return redisFailure("select", selection.error());
  if (static_cast<long long>(selection->ids.size()) != parsed->expected) {
    return jsonError(409, "the selection changed: the filter selects " +
                              std::to_string(selection->ids.size()) + " entries now, not " +
                              std::to_string(parsed->expected) + "; review it and confirm again");
  }
  return std::move(selection->ids);
}

}  // namespace

Json deadLetterSummary(const dlq::Entry& entry) {
  const std::string_view event = entry.event();
  return {{"id", entry.id()},
          {"timestamp", entry.timestamp()},
          {"app", entry.app()},
          {"handler", entry.handler()},
          {"kind", dlq::kindName(entry.kind)},
          {"reason", entry.reason()},
          {"attempts", entry.handler_attempts},
          {"event_preview", eventPreview(event)},
          {"event_bytes", event.size()}};
}

Json deadLetterDetail(const dlq::Entry& entry,
                      const std::vector<invocation::AttemptRecord>& attempts) {
  Json detail = deadLetterSummary(entry);
  Json fields = Json::object();
  for (const auto& [name, value] : entry.record.fields) fields[name] = value;
  detail["fields"] = std::move(fields);
  const std::string event(entry.event());
  detail["event"] = event;
  // Pretty only what decodes as an event (at most 64 deep) and stays within four times the
  // event's size: nesting would otherwise cost indentation quadratic in the depth.
  detail["event_pretty"] = Json();
  detail["event_error"] = Json();
  if (auto decoded = event::decode(event); decoded.ok()) {
    const std::size_t cap = 4 * event.size() + 4096;
    std::string pretty;
    bool over = false;
    event::renderPretty(decoded->root(), [&](std::string_view piece) {
      over = over || pretty.size() + piece.size() > cap;
      if (!over) pretty.append(piece);
    });
    if (!over) detail["event_pretty"] = std::move(pretty);
  } else {
    detail["event_error"] = decoded.error().message;
  }
  const auto refusal = entry.refusal();
  detail["replayable"] = !refusal.has_value();
  detail["not_replayable_because"] = refusal.value_or("");
  Json history = Json::array();
  for (const invocation::AttemptRecord& record : attempts) {
    if (record.app != entry.app() || record.handler != entry.handler()) continue;
    history.push_back({{"attempt", record.attempt},
                       {"consumer", record.consumer},
                       {"started_ms", record.started_ms},
                       {"finished_ms", record.finished_ms},
                       {"outcome", record.outcome},
                       {"reason", record.reason},
                       {"duration_ms", record.duration_ms}});
  }
  detail["attempts_history"] = std::move(history);
  return detail;
}

HttpReply listDeadLetters(ConsoleState& state, const HttpRequest& request) {
  auto filter = parseDlqFilter([&request](std::string_view name) { return request.param(name); });
  if (!filter.ok()) return jsonError(400, filter.error().message);
  const std::string upto = request.param("upto").value_or("");
  const std::string before = request.param("before").value_or("");
  if ((!upto.empty() && !validEntryId(upto)) || (!before.empty() && !validEntryId(before))) {
    return jsonError(400, "upto, before: expected entry ids (<ms>-<seq>)");
  }
  const auto limit = limitParam(request, kDefaultDlqLimit, kMaxDlqLimit);
  if (!limit.ok()) return jsonError(400, limit.error().message);
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  dlq::DeadLetterQueue queue = deadLetters(state, **lease);
  auto page = queue.page(*filter, upto, before, *limit);
  if (!page.ok()) return redisFailure("XREVRANGE", page.error());
  auto length = queue.length();
  if (!length.ok()) return redisFailure("XLEN", length.error());
  Json entries = Json::array();
  for (const dlq::Entry& entry : page->entries) entries.push_back(deadLetterSummary(entry));
  return jsonReply({{"key", state.keys.dlq()},
                    {"length", *length},
                    {"total", page->total},
                    {"upto", page->upto},
                    {"next", page->next},
                    {"entries", std::move(entries)}});
}

HttpReply inspectDeadLetter(ConsoleState& state, const HttpRequest& request) {
  const std::string id = request.param("id").value_or("");
  if (!validEntryId(id)) return jsonError(400, "id: expected an entry id (<ms>-<seq>)");
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  auto entry = deadLetters(state, **lease).find(id);
  if (!entry.ok()) return redisFailure("XRANGE", entry.error());
  if (!*entry) return jsonError(404, "no entry " + id + " in " + state.keys.dlq());
  auto journal = (*lease)->command({"HGETALL", state.keys.attempts((*entry)->originalId())});
  return jsonReply(deadLetterDetail(**entry, invocation::parseAttempts(hashPairs(journal))));
}

HttpReply removeDeadLetters(ConsoleState& state, const HttpRequest& request) {
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  auto selected = selectionOf(state, **lease, request);
  if (auto* refused = std::get_if<HttpReply>(&selected)) return *refused;
  const auto& ids = std::get<std::vector<std::string>>(selected);
  auto removed = deadLetters(state, **lease).remove(ids);
  if (!removed.ok()) return redisFailure("XDEL", removed.error());
  return jsonReply({{"selected", ids.size()}, {"removed", *removed}});
}

HttpReply replayDeadLetters(ConsoleState& state, const HttpRequest& request) {
  if (state.jobs == nullptr) return jsonError(403, "the console is read-only");
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  auto selected = selectionOf(state, **lease, request);
  if (auto* refused = std::get_if<HttpReply>(&selected)) return *refused;
  auto& ids = std::get<std::vector<std::string>>(selected);
  if (ids.size() == 1) {
    // One entry that can never be replayed is refused at once rather than as a job result.
    auto entry = deadLetters(state, **lease).find(ids.front());
    if (!entry.ok()) return redisFailure("XRANGE", entry.error());
    if (!*entry) return jsonError(404, "no entry " + ids.front() + " in " + state.keys.dlq());
    if (auto refusal = (*entry)->refusal()) return jsonError(422, *refusal);
  }
  const std::size_t total = ids.size();
  const std::uint64_t job = state.jobs->start(std::move(ids));
  return jsonReply({{"job", job}, {"total", total}}, 202);
}

HttpReply replayStatus(ConsoleState& state, const HttpRequest& request) {
  if (state.jobs == nullptr) return jsonError(404, "the console is read-only: no jobs");
  const std::string text = request.param("id").value_or("");
  std::uint64_t number = 0;
  if (!parseWholeNumber(text, number)) {
    return jsonError(400, "id: expected a job number");
  }
  auto status = state.jobs->status(number);
  if (!status) return jsonError(404, "no job " + text);
  return jsonReply(*status);
}

}  // namespace relay::console
