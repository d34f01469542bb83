#include "console/pending_api.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "console/console_guard.h"
#include "invocation/flow.h"
#include "invocation/keys.h"
#include "invocation/marker.h"
#include "invocation/plan.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::console {
namespace {

using http::HttpReply;
using http::HttpRequest;

constexpr std::size_t kDefaultPendingLimit = 50;
constexpr std::size_t kMaxPendingLimit = 200;

const char* stateName(invocation::Marker::State state) {
  switch (state) {
    case invocation::Marker::State::kClaimed:
      return "claimed";
    case invocation::Marker::State::kRunning:
      return "running";
    case invocation::Marker::State::kFailed:
      return "failed";
    case invocation::Marker::State::kSucceeded:
      return "succeeded";
    case invocation::Marker::State::kExhausted:
      return "exhausted";
    case invocation::Marker::State::kDeduplicated:
      return "deduplicated";
    case invocation::Marker::State::kSuperseded:
      return "superseded";
    case invocation::Marker::State::kExpired:
      return "expired";
    case invocation::Marker::State::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

}  // namespace

Json invocationsJson(const std::vector<std::pair<std::string, std::string>>& state,
                     const std::vector<invocation::AttemptRecord>& journal) {
  const std::map<std::string, std::string, std::less<>> fields(state.begin(), state.end());
  const auto value = [&fields](std::string_view name) -> const std::string* {
    const auto found = fields.find(name);
    return found == fields.end() ? nullptr : &found->second;
  };
  // Dispatch order and attempt budgets from the plan (docs/pipeline.md "One message", step 3);
  // fields the plan does not name (a state written by an older Relay) follow in hash order.
  std::vector<std::string> names;
  std::map<std::string, int, std::less<>> max_attempts;
  if (const std::string* text = value(invocation::kPlanField)) {
    if (const auto plan = invocation::decodePlan(*text)) {
      for (const invocation::PlannedInvocation& planned : plan->invocations) {
        names.push_back(planned.field());
        max_attempts[planned.field()] = planned.max_attempts;
      }
    }
  }
  for (const auto& [name, text] : state) {
    if (name.rfind("relay:", 0) == 0) continue;  // reserved: retention, plan, reasons, tails
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  Json out = Json::array();
  for (const std::string& name : names) {
    const std::size_t slash = name.find('/');
    Json invocation = {{"app", name.substr(0, slash)},
                       {"handler", slash == std::string::npos ? "" : name.substr(slash + 1)}};
    const std::string* text = value(name);
    const std::optional<invocation::Marker> marker =
        text ? invocation::Marker::parse(*text) : std::nullopt;
    if (!text) {
      invocation["state"] = "planned";  // owed, not started yet
    } else if (!marker) {
      invocation["state"] = "unknown";
      invocation["marker"] = *text;
    } else {
      // A retry-after deferral waits like a failure but was asked for (docs/runtimes.md
      // "Retry-after"): not charged.
      invocation["state"] = marker->deferred ? "retry_after" : stateName(marker->state);
      invocation["attempt"] = marker->attempt;
      if (marker->held()) {
        invocation["claim_deadline_ms"] = marker->deadline_ms;
      }
      if (marker->state == invocation::Marker::State::kFailed) {
        invocation["next_attempt_ms"] = marker->next_attempt_ms;
      }
      if (marker->state == invocation::Marker::State::kExhausted ||
          marker->state == invocation::Marker::State::kExpired || marker->dead_letter) {
        invocation["dlq_written"] = marker->dlq_written;
      }
      if (!marker->other.empty()) invocation["by"] = marker->other;  // the message that won
    }
    // Why it waits for its flow control (docs/apps.md "Flow control") and its earliest start,
    // 0 while it waits for a running invocation of its key to end.
    if (const std::string* waiting = value(std::string(invocation::kWaitPrefix) + name)) {
      if (const auto wait = invocation::parseFlowWait(*waiting)) {
        invocation["wait"] = {{"reason", invocation::flowWaitName(wait->reason)},
                              {"until_ms", wait->until}};
      }
    }
    if (const auto budget = max_attempts.find(name); budget != max_attempts.end()) {
      invocation["max_attempts"] = budget->second;
    }
    // The last failed attempt's exit reason and output tail, kept beside the marker.
    if (const std::string* reason = value(std::string(invocation::kReasonPrefix) + name)) {
      invocation["exit_reason"] = *reason;
    }
    if (const std::string* tail = value(std::string(invocation::kTailPrefix) + name)) {
      invocation["output_tail"] = *tail;
    }
    Json attempts = Json::array();
    for (const invocation::AttemptRecord& record : journal) {
      if (invocation::invocationField(record.app, record.handler) != name) continue;
      attempts.push_back({{"attempt", record.attempt},
                          {"consumer", record.consumer},
                          {"started_ms", record.started_ms},
                          {"finished_ms", record.finished_ms},
                          {"outcome", record.outcome},
                          {"reason", record.reason},
                          {"duration_ms", record.duration_ms}});
      if (marker && marker->held() && record.attempt == marker->attempt &&
          record.finished_ms == 0) {
        invocation["running_on"] = record.consumer;
        invocation["running_since_ms"] = record.started_ms;
      }
    }
    invocation["attempts"] = std::move(attempts);
    out.push_back(std::move(invocation));
  }
  return out;
}

HttpReply pendingMessages(ConsoleState& state, const HttpRequest& request) {
  const std::string before = request.param("before").value_or("");
  if (!before.empty() && !stream::StreamId::parse(before)) {
    return jsonError(400, "before: expected a message id");
  }
  const auto limited = limitParam(request, kDefaultPendingLimit, kMaxPendingLimit);
  if (!limited.ok()) return jsonError(400, limited.error().message);
  const std::size_t limit = *limited;
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  redis::Connection& redis = **lease;
  const std::string& stream = state.keys.stream;
  const std::string& group = state.keys.group;
  Json out = {{"stream", stream},         {"group", group}, {"count", 0},
              {"entries", Json::array()}, {"next", ""},     {"now_ms", nowMs(state.clock)}};
  auto summary = redis.command({"XPENDING", stream, group});
  if (!summary.ok()) {
    if (redis::isReplyError(summary.error(), "NOGROUP")) return jsonReply(out);
    return redisFailure("XPENDING", summary.error());
  }
  if (auto total = summary->at(0); total.ok() && total->integer().ok()) {
    out["count"] = *total->integer();
  }
  // Oldest first; `before` continues after the last id of the previous page.
  auto page = redis.command({"XPENDING", stream, group, before.empty() ? "-" : "(" + before, "+",
                             std::to_string(limit + 1)});
  if (!page.ok()) return redisFailure("XPENDING", page.error());
  struct Row {
    std::string id, consumer;
    long long idle = 0, deliveries = 0;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < page->size() && rows.size() < limit + 1; ++i) {
    auto item = page->at(i);
    if (!item.ok()) continue;
    auto id = item->at(0), consumer = item->at(1), idle = item->at(2), count = item->at(3);
    if (!id.ok() || !consumer.ok() || !idle.ok() || !count.ok()) continue;
    rows.push_back({std::string(id->string().ok() ? *id->string() : ""),
                    std::string(consumer->string().ok() ? *consumer->string() : ""),
                    idle->integer().ok() ? *idle->integer() : 0,
                    count->integer().ok() ? *count->integer() : 0});
  }
  if (rows.size() > limit) {
    rows.resize(limit);
    out["next"] = rows.back().id;
  }
  std::vector<std::vector<std::string>> commands;
  std::vector<std::optional<redis::ReplyLimits>> limits;
  // A pending message's body is read like the worker reads it (docs/operations.md "Memory").
  const redis::ReplyLimits entry = stream::entryReplyLimits(state.config.worker.max_event_bytes);
  for (const Row& row : rows) {
    commands.push_back({"HGETALL", state.keys.state(row.id)});
    commands.push_back({"HGETALL", state.keys.attempts(row.id)});
    commands.push_back({"XRANGE", stream, row.id, row.id});
    limits.insert(limits.end(), {std::nullopt, std::nullopt, entry});
  }
  auto replies = redis.pipeline(commands, limits);
  if (!replies.ok()) return redisFailure("HGETALL", replies.error());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const auto& body = (*replies)[3 * r + 2];
    std::string event;
    bool deleted = true;
    if (body.ok()) {
      auto entries = stream::parseEntries(body->view());
      if (entries.ok() && !entries->empty()) {
        deleted = false;
        if (const std::string* value = entries->front().find("event")) event = *value;
      }
    }
    out["entries"].push_back(
        {{"id", row.id},
         {"consumer", row.consumer},
         {"idle_ms", row.idle},
         {"deliveries", row.deliveries},
         {"payload_missing", deleted},
         {"event_preview", eventPreview(event)},
         {"invocations",
          invocationsJson(hashPairs((*replies)[3 * r]),
                          invocation::parseAttempts(hashPairs((*replies)[3 * r + 1])))}});
  }
  return jsonReply(out);
}

}  // namespace relay::console
