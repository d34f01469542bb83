#include "history/replay_record.h"

#include <algorithm>
#include <cstdio>

#include "common/duration.h"
#include "common/whole_number.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::history {
namespace {

redis::Error protocol(std::string message) {
  return {redis::ErrorKind::kProtocol, std::move(message)};
}

long long number(const std::map<std::string, std::string>& fields, const std::string& name) {
  long long value = 0;
  const auto found = fields.find(name);
  if (found != fields.end()) (void)parseWholeNumber(found->second, value);
  return value;
}

std::string text(const std::map<std::string, std::string>& fields, const std::string& name) {
  const auto found = fields.find(name);
  return found == fields.end() ? std::string() : found->second;
}

double msOf(const std::string& id) {
  const auto parsed = stream::StreamId::parse(id);
  return parsed ? static_cast<double>(parsed->ms) : 0.0;
}

redis::Result<std::map<std::string, std::string>> hashOf(redis::Connection& redis,
                                                         const std::string& key) {
  auto reply = redis.command({"HGETALL", key});
  if (!reply.ok()) return reply.error();
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < reply->size(); i += 2) {
    auto name = reply->at(i);
    auto value = reply->at(i + 1);
    if (!name.ok() || !value.ok() || !name->string().ok() || !value->string().ok()) {
      return protocol("HGETALL " + key + ": not a flat list of strings");
    }
    fields.emplace(std::string(*name->string()), std::string(*value->string()));
  }
  return fields;
}

// Two stream replays cover some of the same entries through some of the same rules.
bool overlaps(const ReplaySpec& a, const ReplaySpec& b) {
  if (a.source != ReplaySpec::Source::kStream || b.source != ReplaySpec::Source::kStream) {
    return false;
  }
  if (a.app != b.app) return false;
  if (!a.handler.empty() && !b.handler.empty() && a.handler != b.handler) return false;
  const auto a_from = stream::StreamId::parse(a.from), a_to = stream::StreamId::parse(a.to);
  const auto b_from = stream::StreamId::parse(b.from), b_to = stream::StreamId::parse(b.to);
  if (!a_from || !a_to || !b_from || !b_to) return false;
  return !(*a_to < *b_from) && !(*b_to < *a_from);
}

}  // namespace

double ReplayStatus::progress() const {
  if (state == "done") return 1.0;
  if (spec.source == ReplaySpec::Source::kDeadLetters) {
    return spec.expected > 0
               ? std::min(1.0, static_cast<double>(published + skipped) / spec.expected)
               : 0.0;
  }
  if (cursor.empty()) return 0.0;
  const double from = msOf(spec.from), to = msOf(spec.to), at = msOf(cursor);
  if (to <= from) return at >= to ? 1.0 : 0.0;
  return std::clamp((at - from) / (to - from), 0.0, 1.0);
}

redis::Result<std::int64_t> redisNowMs(redis::Connection& redis) {
  auto time = redis.command({"TIME"});
  if (!time.ok()) return time.error();
  long long seconds = 0, micros = 0;
  auto s = time->at(0), us = time->at(1);
  if (!s.ok() || !us.ok() || !s->string().ok() || !us->string().ok() ||
      !parseWholeNumber(*s->string(), seconds) || !parseWholeNumber(*us->string(), micros)) {
    return protocol("TIME: unexpected reply");
  }
  return static_cast<std::int64_t>(seconds * 1000 + micros / 1000);
}

redis::Result<std::optional<std::string>> lastRemovedId(redis::Connection& redis,
                                                        const std::string& key) {
  auto reply = redis.command({"XINFO", "STREAM", key});
  if (!reply.ok()) {
    if (reply.error().kind == redis::ErrorKind::kReply) return std::optional<std::string>();
    return reply.error();
  }
  std::optional<stream::StreamId> deleted, first;
  long long length = -1, added = -1;
  for (std::size_t i = 0; i + 1 < reply->size(); i += 2) {
    auto name = reply->at(i);
    auto value = reply->at(i + 1);
    if (!name.ok() || !name->string().ok() || !value.ok()) continue;
    const std::string_view field = *name->string();
    if (field == "length" && value->integer().ok()) length = *value->integer();
    if (field == "entries-added" && value->integer().ok()) added = *value->integer();
    if (!value->string().ok()) continue;
    if (field == "max-deleted-entry-id") deleted = stream::StreamId::parse(*value->string());
    if (field == "recorded-first-entry-id") first = stream::StreamId::parse(*value->string());
  }
  if (!deleted || added < 0) return std::optional<std::string>();  // Redis 6: it does not say
  // XDEL records the newest id it removed; a trim (XTRIM, XADD MAXLEN/MINID) only that fewer
  // entries are left than were added: then everything before the first entry was removed.
  stream::StreamId removed = *deleted;
  if (added > length && first && *first != stream::StreamId{}) {
    const stream::StreamId before = first->seq > 0 ? stream::StreamId{first->ms, first->seq - 1}
                                                   : stream::StreamId{first->ms - 1, UINT64_MAX};
    removed = std::max(removed, before);
  } else if (added > length && length == 0) {
    return std::optional<std::string>(std::string("18446744073709551615-18446744073709551615"));
  }
  return std::optional<std::string>(removed.toString());
}

redis::Result<std::optional<std::pair<std::string, std::string>>> removedPart(
    redis::Connection& redis, const std::string& key, const std::string& from,
    const std::string& to) {
  using Part = std::optional<std::pair<std::string, std::string>>;
  const auto first = stream::StreamId::parse(from), last = stream::StreamId::parse(to);
  if (!first || !last) return Part();
  auto removed = lastRemovedId(redis, key);
  if (!removed.ok()) return removed.error();
  if (*removed) {
    const auto id = stream::StreamId::parse(**removed);
    if (!id || *id < *first || *id == stream::StreamId{}) return Part();
    return Part(std::pair{from, (*last < *id ? *last : *id).toString()});
  }
  auto head = redis.command({"XRANGE", key, "-", "+", "COUNT", "1"});
  if (!head.ok()) return head.error();
  auto entries = stream::parseEntries(head->view());
  if (!entries.ok()) return entries.error();
  if (!entries->empty()) {
    const auto held = stream::StreamId::parse(entries->front().id);
    if (held && !(*first < *held)) return Part();
  }
  return Part(std::pair{from, to});
}

redis::Result<std::optional<MissingPart>> missingOfWindow(
    redis::Connection& redis, const invocation::StreamKeys& keys, const std::string& from,
    const std::string& to, const std::string& archive, const std::string& app,
    std::chrono::milliseconds stream_retention) {
  auto removed = removedPart(redis, keys.stream, from, to);
  if (!removed.ok()) return removed.error();
  if (!*removed) return std::optional<MissingPart>();
  auto head = redis.command({"XRANGE", keys.stream, "-", "+", "COUNT", "1"});
  if (!head.ok()) return head.error();
  auto entries = stream::parseEntries(head->view());
  if (!entries.ok()) return entries.error();
  std::optional<stream::StreamId> first;
  if (!entries->empty()) first = stream::StreamId::parse(entries->front().id);
  auto part = missingPart(redis, keys, *stream::StreamId::parse((*removed)->first),
                          *stream::StreamId::parse((*removed)->second), first, archive, app);
  if (!part.ok() || !*part || !archive.empty() || stream_retention.count() <= 0) return part;
  if ((*part)->reason.rfind("not in the stream", 0) != 0) return part;  // a recorded retention
  auto now = redisNowMs(redis);
  if (!now.ok()) return now.error();
  // The part reaches back past the retention: what the stream held there, the trimmer removed.
  const auto start = stream::StreamId::parse((*part)->from);
  if (start && static_cast<std::int64_t>(start->ms) < *now - stream_retention.count()) {
    (*part)->reason = "older than the stream's retention (REDIS_STREAM_RETENTION=" +
                      formatDuration(stream_retention) +
                      ", as configured here): trimmed, and no archive keeps it";
  }
  return part;
}

std::string newReplayId(std::int64_t now_ms, std::uint32_t random) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "%04x", random & 0xffffU);
  return "r-" + std::to_string(now_ms) + "-" + hex;
}

std::vector<std::string> replayFields(const std::string& id, const ReplaySpec& spec,
                                      std::int64_t created_ms) {
  const bool dead_letters = spec.source == ReplaySpec::Source::kDeadLetters;
  std::vector<std::string> fields = {"id",         id,
                                     "source",     dead_letters ? "dlq" : "stream",
                                     "app",        spec.app,
                                     "handler",    spec.handler,
                                     "from",       spec.from,
                                     "to",         spec.to,
                                     "filter",     spec.filter,
                                     "dlq_filter", spec.dlq_filter,
                                     "upto",       spec.upto,
                                     "expected",   std::to_string(spec.expected),
                                     "rate",       std::to_string(spec.rate),
                                     "again",      spec.again ? "1" : "0",
                                     "state",      "running",
                                     "created_ms", std::to_string(created_ms)};
  for (const char* counter : {"scanned", "published", "skipped", "duplicates"}) {
    fields.push_back(counter);
    fields.push_back("0");
  }
  return fields;
}

ReplayStatus replayStatusOf(std::string id, const std::map<std::string, std::string>& fields) {
  ReplayStatus status;
  status.id = std::move(id);
  ReplaySpec& spec = status.spec;
  spec.source = text(fields, "source") == "dlq" ? ReplaySpec::Source::kDeadLetters
                                                : ReplaySpec::Source::kStream;
  spec.app = text(fields, "app");
  spec.handler = text(fields, "handler");
  spec.from = text(fields, "from");
  spec.to = text(fields, "to");
  spec.filter = text(fields, "filter");
  spec.dlq_filter = text(fields, "dlq_filter");
  spec.upto = text(fields, "upto");
  spec.expected = number(fields, "expected");
  spec.rate = std::atof(text(fields, "rate").c_str());
  spec.again = text(fields, "again") == "1";
  status.state = text(fields, "state");
  status.error = text(fields, "error");
  status.created_ms = number(fields, "created_ms");
  status.finished_ms = number(fields, "finished_ms");
  status.cursor = text(fields, "cursor");
  status.scanned = number(fields, "scanned");
  status.published = number(fields, "published");
  status.skipped = number(fields, "skipped");
  status.duplicates = number(fields, "duplicates");
  status.missing_from = text(fields, "missing_from");
  status.missing_to = text(fields, "missing_to");
  status.missing_reason = text(fields, "missing_reason");
  status.driver = text(fields, "driver");
  status.lease_until = number(fields, "lease_until");
  return status;
}

redis::Result<std::optional<ReplayStatus>> readReplay(redis::Connection& redis,
                                                      const invocation::StreamKeys& keys,
                                                      std::string_view id) {
  auto fields = hashOf(redis, keys.replay(id));
  if (!fields.ok()) return fields.error();
  if (fields->empty()) return std::optional<ReplayStatus>();
  return std::optional<ReplayStatus>(replayStatusOf(std::string(id), *fields));
}

redis::Result<std::vector<ReplayStatus>> listReplays(redis::Connection& redis,
                                                     const invocation::StreamKeys& keys) {
  auto ids = redis.command({"ZRANGE", keys.replays(), "0", "-1", "REV"});
  if (!ids.ok()) return ids.error();
  std::vector<ReplayStatus> replays;
  std::vector<std::string> gone;
  for (std::size_t i = 0; i < ids->size(); ++i) {
    auto id = ids->at(i);
    if (!id.ok() || !id->string().ok()) return protocol("ZRANGE: not a list of ids");
    const std::string name(*id->string());
    auto status = readReplay(redis, keys, name);
    if (!status.ok()) return status.error();
    if (*status) {
      replays.push_back(std::move(**status));
    } else {
      gone.push_back(name);  // expired with its retention: the index forgets it too
    }
  }
  if (!gone.empty()) {
    std::vector<std::string> command = {"ZREM", keys.replays()};
    command.insert(command.end(), gone.begin(), gone.end());
    (void)redis.command(command);
  }
  return replays;
}

// Creates the replay only if the index still holds exactly the ids the caller checked (newest
// first, one per line): one script, so no ACL needs WATCH/MULTI/EXEC (docs/operations.md).
constexpr const char* kCreateIfUnchanged = R"LUA(
if ARGV[1] == '1' and table.concat(redis.call('ZRANGE', KEYS[1], 0, -1, 'REV'), '\n') ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[2], unpack(ARGV, 5))
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
return 1
)LUA";

redis::Result<CreatedReplay> createReplay(redis::Connection& redis,
                                          const invocation::StreamKeys& keys,
                                          const ReplaySpec& spec, const std::string& id) {
  // Optimistic: a replay created by someone else between the check and the creation makes the
  // script refuse, and the check runs again with it.
  for (int round = 0; round < 8; ++round) {
    CreatedReplay created;
    created.id = id;
    std::string seen;
    if (!spec.again) {
      auto existing = listReplays(redis, keys);
      if (!existing.ok()) return existing.error();
      for (const ReplayStatus& earlier : *existing) {
        seen += (seen.empty() ? "" : "\n") + earlier.id;
        if (earlier.state == "failed" || !overlaps(earlier.spec, spec)) continue;
        created.conflict = ReplayConflict{earlier.id, earlier.spec.from, earlier.spec.to};
        return created;
      }
    }
    auto now = redisNowMs(redis);
    if (!now.ok()) return now.error();
    const std::int64_t now_ms = *now;
    std::vector<std::string> command = {
        "EVAL",         kCreateIfUnchanged,     "2",
        keys.replays(), keys.replay(id),        spec.again ? "0" : "1",
        seen,           std::to_string(now_ms), id};
    for (std::string& field : replayFields(id, spec, now_ms)) command.push_back(std::move(field));
    auto created_now = redis.command(command);
    if (!created_now.ok()) return created_now.error();
    if (created_now->integer().ok() && *created_now->integer() == 1) return created;
  }
  return protocol("replays kept changing while this one was created; try again");
}

redis::Result<ReplayCancellation> cancelReplay(redis::Connection& redis,
                                               const invocation::StreamKeys& keys,
                                               invocation::LifecycleStore& store,
                                               std::string_view id, bool dead_letter) {
  ReplayCancellation result;
  // The state first: the publication script checks it, so nothing is published after this.
  auto stopped = redis.command({"EVAL",
                                "if redis.call('HGET', KEYS[1], 'state') ~= 'running' then "
                                "return 0 end "
                                "local t = redis.call('TIME') "
                                "redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finished_ms', "
                                "tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) "
                                "redis.call('PEXPIRE', KEYS[1], ARGV[1]) "
                                "redis.call('PEXPIRE', KEYS[2], ARGV[1]) "
                                "return 1",
                                "2", keys.replay(id), keys.replayCopies(id),
                                std::to_string(kReplayRecordTtl.count())});
  if (!stopped.ok()) return stopped.error();
  result.stopped = stopped->integer().ok() && *stopped->integer() == 1;
  // Then what it published and is not finished: each copy's invocations are cancelled.
  std::string cursor = "0";
  const std::string cancel_id = "replay " + std::string(id);
  do {
    auto page = redis.command({"HSCAN", keys.replayCopies(id), cursor, "COUNT", "500"});
    if (!page.ok()) return page.error();
    auto next = page->at(0);
    auto items = page->at(1);
    if (!next.ok() || !items.ok() || !next->string().ok()) return protocol("HSCAN: bad reply");
    cursor = std::string(*next->string());
    for (std::size_t i = 1; i < items->size(); i += 2) {
      auto copy = items->at(i);
      if (!copy.ok() || !copy->string().ok()) continue;
      ++result.copies;
      auto verdict =
          store.cancel(*copy->string(), invocation::CancelRequest{"*", dead_letter, cancel_id});
      if (!verdict.ok()) {
        result.errors.push_back(std::string(*copy->string()) + ": " + verdict.error().message);
        continue;
      }
      bool cancelled = verdict->kind == invocation::CancelVerdict::Kind::kRequested;
      for (const invocation::CancelledInvocation& invocation : verdict->invocations) {
        if (invocation.what == invocation::CancelledInvocation::What::kFinished) continue;
        cancelled = true;
        if (invocation.what == invocation::CancelledInvocation::What::kRunning) ++result.running;
      }
      result.cancelled += cancelled;
    }
  } while (cursor != "0");
  return result;
}

}  // namespace relay::history
