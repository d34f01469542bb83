#include "stream/pending_inspector.h"

#include <map>
#include <optional>
#include <set>

#include "invocation/paused_apps.h"
#include "invocation/plan.h"

namespace relay::stream {
namespace {

// What an XRANGE read only to see whether an entry exists may bring into memory.
constexpr redis::ReplyLimits kPresenceOnly{/*max_bulk=*/1024, /*max_array_bytes=*/4096,
                                           /*max_elements=*/64, /*kept=*/16};

redis::Error malformedReply(std::string message) {
  return {redis::ErrorKind::kProtocol, std::move(message)};
}

std::vector<std::pair<std::string, std::string>> pairsOf(redis::ReplyView reply) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i + 1 < reply.size(); i += 2) {
    auto name = reply.at(i);
    auto value = reply.at(i + 1);
    if (name.ok() && value.ok() && name->string().ok() && value->string().ok()) {
      out.emplace_back(*name->string(), *value->string());
    }
  }
  return out;
}

// Redis's clock from a TIME reply (seconds, microseconds), in milliseconds.
redis::Result<std::int64_t> millisOf(redis::ReplyView time) {
  auto seconds = time.at(0);
  auto micros = time.at(1);
  if (!seconds.ok() || !micros.ok() || !seconds->string().ok() || !micros->string().ok()) {
    return malformedReply("TIME: not two numbers");
  }
  try {
    return std::stoll(std::string(*seconds->string())) * 1000 +
           std::stoll(std::string(*micros->string())) / 1000;
  } catch (const std::exception&) {
    return malformedReply("TIME: not two numbers");
  }
}

// The apps a state hash's plan (or, without one, its invocation fields) names.
std::set<std::string> appsOf(const std::vector<std::pair<std::string, std::string>>& state) {
  std::set<std::string> apps;
  for (const auto& [name, value] : state) {
    if (name == invocation::kPlanField) {
      if (auto plan = invocation::decodePlan(value)) {
        for (const auto& planned : plan->invocations) apps.insert(planned.app);
      }
    } else if (name.rfind("relay:", 0) != 0) {
      apps.insert(name.substr(0, name.find('/')));
    }
  }
  return apps;
}

std::string pausedMember(const std::string& app, const std::string& id) { return app + "\n" + id; }

}  // namespace

redis::Result<std::vector<PendingEntry>> parsePendingEntries(redis::ReplyView reply) {
  auto items = reply.elements();
  if (!items.ok()) return items.error();
  std::vector<PendingEntry> entries;
  for (const redis::ReplyView& item : *items) {
    auto id = item.at(0), consumer = item.at(1), idle = item.at(2), count = item.at(3);
    if (!id.ok() || !consumer.ok() || !idle.ok() || !count.ok() || !id->string().ok() ||
        !consumer->string().ok() || !idle->integer().ok() || !count->integer().ok()) {
      return malformedReply("XPENDING: an entry that is not [id, consumer, idle, deliveries]");
    }
    entries.push_back({std::string(*id->string()), std::string(*consumer->string()),
                       *idle->integer(), *count->integer()});
  }
  return entries;
}

redis::Result<std::vector<PendingReport>> PendingInspector::explain(
    redis::Connection& redis, const std::vector<PendingEntry>& entries, bool payloads) const {
  if (entries.empty()) return std::vector<PendingReport>{};
  // The paused apps through their one reader (the group's set and the legacy stream-wide one).
  auto paused = invocation::readPausedApps(redis, keys_);
  if (!paused.ok()) return paused.error();
  std::vector<std::vector<std::string>> commands = {{"TIME"}};
  const std::size_t per_entry = payloads ? 3 : 2;
  for (const PendingEntry& entry : entries) {
    commands.push_back({"HGETALL", keys_.state(entry.id)});
    commands.push_back({"ZSCORE", keys_.due(), entry.id});
    if (payloads) commands.push_back({"XRANGE", keys_.stream, entry.id, entry.id});
  }
  std::map<std::string, std::size_t> owners;  // owner -> its EXISTS in `commands`
  for (const PendingEntry& entry : entries) {
    if (entry.consumer == invocation::kParkingConsumer || owners.count(entry.consumer)) continue;
    owners[entry.consumer] = commands.size();
    commands.push_back({"EXISTS", keys_.heartbeat(entry.consumer)});
  }
  // A payload is read only to know it exists: cut to its first bytes as it streams in, never
  // pulled whole (docs/operations.md "Memory": a producer may have written 512 MB in it).
  std::vector<std::optional<redis::ReplyLimits>> limits(commands.size());
  for (std::size_t i = 0; payloads && i < entries.size(); ++i) {
    limits[1 + per_entry * i + 2] = kPresenceOnly;
  }
  auto replies = redis.pipeline(commands, limits);
  if (!replies.ok()) return replies.error();
  if (!(*replies)[0].ok()) return (*replies)[0].error();
  auto now = millisOf((*replies)[0]->view());
  if (!now.ok()) return now.error();
  std::vector<PendingFacts> facts(entries.size());
  std::vector<std::vector<std::string>> queued;  // parked messages: their paused-queue members
  std::vector<std::pair<std::size_t, std::string>> queued_of;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    PendingFacts& f = facts[i];
    f.now_ms = *now;
    f.paused_apps = *paused;
    const std::size_t at = 1 + per_entry * i;
    const auto& state = (*replies)[at];
    if (state.ok()) {
      f.state = pairsOf(state->view());
    } else {
      f.state_error = state.error().message;
    }
    if (const auto& due = (*replies)[at + 1]; due.ok() && due->string().ok()) {
      try {
        f.due_at_ms = std::stoll(std::string(*due->string()));
      } catch (const std::exception&) {
      }
    }
    if (payloads) {
      const auto& body = (*replies)[at + 2];
      f.payload_exists = body.ok() && body->size() > 0;
    }
    if (const auto owner = owners.find(entries[i].consumer); owner != owners.end()) {
      const auto& exists = (*replies)[owner->second];
      f.owner_alive = exists.ok() && exists->integer().ok() && *exists->integer() > 0;
    }
    if (entries[i].consumer == invocation::kParkingConsumer) {
      for (const std::string& app : appsOf(f.state)) {
        queued.push_back({"ZSCORE", keys_.pausedQueue(), pausedMember(app, entries[i].id)});
        queued_of.emplace_back(i, app);
      }
    }
  }
  if (!queued.empty()) {
    auto scores = redis.pipeline(queued);
    if (!scores.ok()) return scores.error();
    for (std::size_t q = 0; q < queued.size(); ++q) {
      const auto& score = (*scores)[q];
      if (score.ok() && !score->isNil()) {
        facts[queued_of[q].first].paused_queue_apps.push_back(queued_of[q].second);
      }
    }
  }
  std::vector<PendingReport> reports;
  reports.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    reports.push_back(explainPending(entries[i], facts[i], catalog_));
  }
  return reports;
}

redis::Result<std::optional<PendingReport>> PendingInspector::oldest(
    redis::Connection& redis) const {
  auto first = page(redis, "", 1, /*payloads=*/false);
  if (!first.ok()) return first.error();
  if (first->empty()) return std::optional<PendingReport>{};
  return std::optional<PendingReport>(std::move(first->front()));
}

redis::Result<std::vector<PendingReport>> PendingInspector::page(redis::Connection& redis,
                                                                 std::string_view after, int count,
                                                                 bool payloads) const {
  auto listed = redis.command({"XPENDING", keys_.stream, keys_.group,
                               after.empty() ? "-" : "(" + std::string(after), "+",
                               std::to_string(std::max(count, 1))});
  if (!listed.ok()) return listed.error();
  auto entries = parsePendingEntries(listed->view());
  if (!entries.ok()) return entries.error();
  return explain(redis, *entries, payloads);
}

redis::Result<std::vector<std::optional<PendingReport>>> PendingInspector::find(
    redis::Connection& redis, const std::vector<std::string>& ids, bool payloads) const {
  std::vector<std::vector<std::string>> commands;
  for (const std::string& id : ids) {
    commands.push_back({"XPENDING", keys_.stream, keys_.group, id, id, "1"});
  }
  auto replies = redis.pipeline(commands);
  if (!replies.ok()) return replies.error();
  std::vector<PendingEntry> found;
  std::vector<std::optional<std::size_t>> index(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!(*replies)[i].ok()) return (*replies)[i].error();
    auto entries = parsePendingEntries((*replies)[i]->view());
    if (!entries.ok()) return entries.error();
    if (entries->empty()) continue;
    index[i] = found.size();
    found.push_back(std::move(entries->front()));
  }
  auto reports = explain(redis, found, payloads);
  if (!reports.ok()) return reports.error();
  std::vector<std::optional<PendingReport>> out(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (index[i]) out[i] = std::move((*reports)[*index[i]]);
  }
  return out;
}

}  // namespace relay::stream
