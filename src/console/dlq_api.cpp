#include "console/dlq_api.h"

#include "common/rfc3339.h"
#include "common/whole_number.h"
#include "console/console_guard.h"
#include "dlq/dead_letter_queue.h"
#include "dlq/replayer.h"
#include "stream/stream_id.h"

namespace relay::console {
namespace {

using http::HttpReply;
using http::HttpRequest;

constexpr std::size_t kDefaultDlqLimit = 50;
constexpr std::size_t kMaxDlqLimit = 500;

Result<std::int64_t> parseTime(std::string_view name, const std::string& text) {
  std::int64_t ms = 0;
  if (parseWholeNumber(text, ms)) return ms;
  if (const auto instant = parseRfc3339(text)) {
    return instant->seconds * 1000 + instant->nanos / 1'000'000;
  }
  return Error::invalid(std::string(name) +
                        ": expected an RFC 3339 time (2026-01-01T10:00:00Z) or Unix milliseconds");
}

bool validId(const std::string& id) {
  return id.find('-') != std::string::npos && stream::StreamId::parse(id).has_value();
}

std::optional<std::string> jsonParam(const Json& object, std::string_view name) {
  if (!object.is_object()) return std::nullopt;
  const auto found = object.find(std::string(name));
  if (found == object.end() || found->is_null()) return std::nullopt;
  if (found->is_string()) return found->get<std::string>();
  return found->dump();
}

// The ids a mutation's body names: explicit ids, or a filter's selection confirmed with its
// bound and the count the operator saw. A selection that no longer has that count is refused
// (409).
std::variant<std::vector<std::string>, HttpReply> selectionOf(ConsoleState& state,
                                                              redis::Connection& redis,
                                                              const HttpRequest& request) {
  const Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return jsonError(400, "expected a JSON object");
  if (const auto ids = body.find("ids"); ids != body.end()) {
    if (!ids->is_array() || ids->empty()) return jsonError(400, "ids: expected an array of ids");
    std::vector<std::string> out;
    for (const Json& id : *ids) {
      if (!id.is_string() || !validId(id.get<std::string>())) {
        return jsonError(400, "ids: every id must be <ms>-<seq>");
      }
      out.push_back(id.get<std::string>());
    }
    return out;
  }
  const auto filter_json = body.find("filter");
  const auto upto = jsonParam(body, "upto");
  const auto expected = body.find("expected");
  if (filter_json == body.end() || !upto || !validId(*upto) || expected == body.end() ||
      !expected->is_number_integer()) {
    return jsonError(400,
                     "expected {\"ids\": [...]} or {\"filter\": {...}, \"upto\": id, "
                     "\"expected\": count} as the Dead letters page sends it");
  }
  auto filter = parseDlqFilter(
      [&filter_json](std::string_view name) { return jsonParam(*filter_json, name); });
  if (!filter.ok()) return jsonError(400, filter.error().message);
  auto selection = dlq::DeadLetterQueue(redis, state.keys.dlq()).select(*filter, *upto);
  if (!selection.ok()) return redisFailure("select", selection.error());
  const auto wanted = expected->get<long long>();
  if (static_cast<long long>(selection->ids.size()) != wanted) {
    return jsonError(409, "the selection changed: the filter selects " +
                              std::to_string(selection->ids.size()) + " entries now, not " +
                              std::to_string(wanted) + "; review it and confirm again");
  }
  return std::move(selection->ids);
}

}  // namespace

Result<dlq::DlqFilter> parseDlqFilter(const ParamGetter& get) {
  dlq::DlqFilter filter;
  const auto text = [&get](std::string_view name) { return get(name).value_or(""); };
  filter.app = text("app");
  filter.handler = text("handler");
  if (const std::string kind = text("kind"); !kind.empty()) {
    filter.kind = dlq::parseKind(kind);
    if (!filter.kind)
      return Error::invalid(
          "kind: expected handler, malformed, oversized, schedule, poison or operator");
  }
  filter.reason = text("reason");
  filter.text = text("q");
  for (const auto& [name, slot] :
       {std::pair{"since", &filter.since_ms}, {"until", &filter.until_ms}}) {
    const std::string value = text(name);
    if (value.empty()) continue;
    auto ms = parseTime(name, value);
    if (!ms.ok()) return ms.error();
    *slot = *ms;
  }
  return filter;
}

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
  const Json parsed = Json::parse(event, nullptr, /*allow_exceptions=*/false);
  detail["event"] = event;
  detail["event_pretty"] = parsed.is_discarded()
                               ? Json()
                               : Json(parsed.dump(2, ' ', false, Json::error_handler_t::replace));
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
  if ((!upto.empty() && !validId(upto)) || (!before.empty() && !validId(before))) {
    return jsonError(400, "upto, before: expected entry ids (<ms>-<seq>)");
  }
  const auto limit = limitParam(request, kDefaultDlqLimit, kMaxDlqLimit);
  if (!limit.ok()) return jsonError(400, limit.error().message);
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  dlq::DeadLetterQueue queue(**lease, state.keys.dlq());
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
  if (!validId(id)) return jsonError(400, "id: expected an entry id (<ms>-<seq>)");
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  auto entry = dlq::DeadLetterQueue(**lease, state.keys.dlq()).find(id);
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
  auto removed = dlq::DeadLetterQueue(**lease, state.keys.dlq()).remove(ids);
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
    auto entry = dlq::DeadLetterQueue(**lease, state.keys.dlq()).find(ids.front());
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
