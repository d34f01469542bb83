#include "console/overview_api.h"

#include <map>

#include "common/whole_number.h"
#include "console/console_guard.h"
#include "stream/pending_inspector.h"
#include "stream/pending_json.h"
#include "stream/retention.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"
#include "stream/trimmer.h"

namespace relay::console {
namespace {

using http::HttpReply;
using http::HttpRequest;

constexpr std::int64_t kIdleMs = 5 * 60'000;
constexpr int kDefaultMinutes = 180;
constexpr int kMaxMinutes = 1440;

// The series the page charts, present even when nothing was counted.
constexpr const char* kSeries[] = {
    "events:matched", "events:unmatched", "events:malformed", "events:oversized", "events:schedule",
    "events:obsolete_schedule", "invocations:succeeded", "invocations:failed",
    "invocations:exhausted", "invocations:blocked", "invocations:unavailable", "dlq:handler",
    // Flow control (docs/apps.md "Flow control"): none of these ran the handler but retry_after.
    "invocations:deferred", "invocations:deduplicated", "invocations:superseded",
    "invocations:retry_after",
    // docs/pipeline.md "Cancellation": runs stopped by relay cancel or the console.
    "invocations:cancelled"};

// An XINFO reply (alternating names and values) as a map of views into it.
std::map<std::string, redis::ReplyView> pairsOf(redis::ReplyView reply) {
  std::map<std::string, redis::ReplyView> out;
  auto elements = reply.elements();
  if (!elements.ok()) return out;
  for (std::size_t i = 0; i + 1 < elements->size(); i += 2) {
    auto name = (*elements)[i].string();
    if (name.ok()) out.emplace(std::string(*name), (*elements)[i + 1]);
  }
  return out;
}

long long integerOf(const std::map<std::string, redis::ReplyView>& pairs, const std::string& name) {
  const auto found = pairs.find(name);
  if (found == pairs.end()) return 0;
  auto value = found->second.integer();
  return value.ok() ? *value : 0;
}

Json textOf(const std::map<std::string, redis::ReplyView>& pairs, const std::string& name) {
  const auto found = pairs.find(name);
  if (found == pairs.end()) return Json();
  auto value = found->second.string();
  return value.ok() ? Json(std::string(*value)) : Json();
}

}  // namespace

std::string_view consumerHealth(bool heartbeat, std::int64_t idle_ms) {
  if (heartbeat) return "healthy";
  if (idle_ms <= kIdleMs) return "silent";
  return "gone";
}

Json throughputJson(const std::vector<stream::MinuteCounts>& history) {
  std::map<std::string, Json> series;
  for (const char* name : kSeries) series[name] = Json::array();
  for (const stream::MinuteCounts& minute : history) {
    for (const auto& [name, unused] : minute.counts) series.try_emplace(name, Json::array());
  }
  Json minutes = Json::array();
  for (const stream::MinuteCounts& minute : history) {
    minutes.push_back(minute.minute * 60);
    for (auto& [name, values] : series) {
      const auto found = minute.counts.find(name);
      values.push_back(found == minute.counts.end() ? 0 : found->second);
    }
  }
  Json out = {{"minutes", std::move(minutes)}, {"series", Json::object()}};
  for (auto& [name, values] : series) out["series"][name] = std::move(values);
  return out;
}

HttpReply overview(ConsoleState& state, const HttpRequest& request) {
  int minutes = kDefaultMinutes;
  if (const auto text = request.param("minutes"); text && !text->empty()) {
    if (!parseWholeNumber(*text, minutes) || minutes < 1 || minutes > kMaxMinutes) {
      return jsonError(400, "minutes: expected 1.." + std::to_string(kMaxMinutes));
    }
  }
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  redis::Connection& redis = **lease;
  const std::int64_t now = nowMs(state.clock);
  const std::string& stream = state.keys.stream;
  const std::string& group = state.keys.group;
  Json out = {{"now_ms", now},
              {"stream", {{"name", stream}, {"exists", false}, {"length", 0}}},
              {"group", {{"name", group}, {"exists", false}}},
              {"consumers", Json::array()},
              {"redis", state.config.worker.redis.describe()}};

  // XINFO STREAM holds the first and the last entry whole: read cut like the worker reads
  // entries (docs/operations.md "Memory"), or one huge event is pulled on every refresh.
  auto info = redis.command({"XINFO", "STREAM", stream},
                            stream::entryReplyLimits(state.config.worker.max_event_bytes));
  if (info.ok()) {
    const auto pairs = pairsOf(info->view());
    out["stream"] = {{"name", stream},
                     {"exists", true},
                     {"length", integerOf(pairs, "length")},
                     {"last_id", textOf(pairs, "last-generated-id")}};
  } else if (info.error().kind != redis::ErrorKind::kReply) {
    return redisFailure("XINFO STREAM", info.error());
  }
  if (info.ok()) {
    auto groups = redis.command({"XINFO", "GROUPS", stream});
    if (!groups.ok()) return redisFailure("XINFO GROUPS", groups.error());
    auto list = groups->elements();
    for (std::size_t i = 0; list.ok() && i < list->size(); ++i) {
      const auto pairs = pairsOf((*list)[i]);
      if (textOf(pairs, "name") != Json(group)) continue;
      const auto lag = pairs.find("lag");
      out["group"] = {
          {"name", group},
          {"exists", true},
          {"pending", integerOf(pairs, "pending")},
          {"lag", lag != pairs.end() && lag->second.integer().ok() ? Json(*lag->second.integer())
                                                                   : Json()},
          {"last_delivered_id", textOf(pairs, "last-delivered-id")}};
    }
  }
  if (out["group"]["exists"].get<bool>()) {
    auto consumers = redis.command({"XINFO", "CONSUMERS", stream, group});
    if (!consumers.ok()) return redisFailure("XINFO CONSUMERS", consumers.error());
    auto list = consumers->elements();
    std::vector<std::map<std::string, redis::ReplyView>> rows;
    std::vector<std::vector<std::string>> beats;
    for (std::size_t i = 0; list.ok() && i < list->size(); ++i) {
      rows.push_back(pairsOf((*list)[i]));
      const Json name = textOf(rows.back(), "name");
      beats.push_back(
          {"GET", state.keys.heartbeat(name.is_string() ? name.get<std::string>() : "")});
    }
    auto heartbeats = redis.pipeline(beats);
    if (!heartbeats.ok()) return redisFailure("GET", heartbeats.error());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const long long idle = integerOf(rows[i], "idle");
      const auto& beat = (*heartbeats)[i];
      const bool alive = beat.ok() && !beat->isNil() && beat->string().ok();
      Json row = {{"name", textOf(rows[i], "name")},
                  {"pending", integerOf(rows[i], "pending")},
                  {"idle_ms", idle},
                  {"health", consumerHealth(alive, idle)}};
      if (alive) {
        const Json worker = Json::parse(*beat->string(), nullptr, false);
        if (worker.is_object()) row["worker"] = worker;
      }
      out["consumers"].push_back(std::move(row));
    }
    // The oldest pending message and why it waits (docs/operations.md "Pending messages").
    auto oldest = stream::PendingInspector(state.keys).oldest(redis);
    if (!oldest.ok()) return redisFailure("XPENDING", oldest.error());
    if (*oldest) out["group"]["oldest_pending"] = stream::pendingJson(**oldest);
  }
  // The pending entry that keeps REDIS_STREAM_RETENTION from trimming, in any group.
  out["trim_held_back"] = Json();
  auto positions = stream::Trimmer::groupPositions(redis, stream);
  if (!positions.ok()) return redisFailure("XINFO GROUPS", positions.error());
  if (const auto held = stream::trimHeldBack(*positions, state.clock.now(),
                                             state.config.worker.stream_retention)) {
    auto found = stream::PendingInspector({stream, held->group})
                     .find(redis, {held->id.toString()}, /*payloads=*/false);
    if (!found.ok()) return redisFailure("XPENDING", found.error());
    if (found->front()) {
      out["trim_held_back"] = {{"group", held->group},
                               {"retention_ms", state.config.worker.stream_retention.count()},
                               {"message", stream::pendingJson(*found->front())}};
    }
  }
  auto dlq = redis.command({"XLEN", state.keys.dlq()});
  if (!dlq.ok()) return redisFailure("XLEN", dlq.error());
  out["dlq"] = {{"key", state.keys.dlq()}, {"length", dlq->integer().ok() ? *dlq->integer() : 0}};
  const std::int64_t last = now / 60'000;
  auto history = stream::readThroughput(redis, state.keys, last - minutes + 1, last);
  if (!history.ok()) return redisFailure("HGETALL", history.error());
  out["throughput"] = throughputJson(*history);
  return jsonReply(out);
}

}  // namespace relay::console
