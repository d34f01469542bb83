#include "stream/attempt_journal.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "invocation/keys.h"

namespace relay::stream {
namespace {

using Json = nlohmann::json;

std::int64_t unixMs(WallTime time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
}

std::string field(std::string_view app, std::string_view handler, int attempt) {
  return invocation::invocationField(app, handler) + "#" + std::to_string(attempt);
}

}  // namespace

AttemptJournal::AttemptJournal(invocation::StreamKeys keys, std::string consumer,
                               std::chrono::milliseconds retention, observability::Metrics& metrics,
                               Clock& clock)
    : keys_(std::move(keys)),
      consumer_(std::move(consumer)),
      retention_(retention),
      metrics_(metrics),
      clock_(clock) {}

void AttemptJournal::started(redis::Connection& redis, std::string_view id, std::string_view app,
                             std::string_view handler, int attempt) {
  AttemptRecord record;
  record.app = app;
  record.handler = handler;
  record.attempt = attempt;
  record.consumer = consumer_;
  record.started_ms = unixMs(clock_.now());
  write(redis, id, record);
}

void AttemptJournal::finished(redis::Connection& redis, std::string_view id, std::string_view app,
                              std::string_view handler, int attempt, std::string_view outcome,
                              std::string_view reason, std::chrono::nanoseconds duration) {
  const std::int64_t now = unixMs(clock_.now());
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
  AttemptRecord record;
  record.app = app;
  record.handler = handler;
  record.attempt = attempt;
  record.consumer = consumer_;
  record.started_ms = now - took;
  record.finished_ms = now;
  record.outcome = outcome;
  record.reason = reason;
  record.duration_ms = took;
  write(redis, id, record);
}

void AttemptJournal::write(redis::Connection& redis, std::string_view id,
                           const AttemptRecord& record) {
  Json value = {{"consumer", record.consumer}, {"started_ms", record.started_ms}};
  if (record.finished_ms != 0) {
    value["finished_ms"] = record.finished_ms;
    value["outcome"] = record.outcome;
    value["reason"] = record.reason;
    value["duration_ms"] = record.duration_ms;
  }
  const std::string key = keys_.attempts(id);
  std::vector<std::vector<std::string>> commands = {
      {"HSET", key, field(record.app, record.handler, record.attempt),
       value.dump(-1, ' ', false, Json::error_handler_t::replace)}};
  if (retention_.count() > 0) {
    commands.push_back({"PEXPIRE", key, std::to_string(retention_.count())});
  }
  auto replies = redis.pipeline(commands);
  bool ok = replies.ok();
  if (ok) {
    for (const auto& reply : *replies) ok = ok && reply.ok();
  }
  if (!ok) metrics_.countRedisError("journal");
}

std::vector<AttemptRecord> parseAttempts(
    const std::vector<std::pair<std::string, std::string>>& hash) {
  std::vector<AttemptRecord> records;
  for (const auto& [name, text] : hash) {
    // `<app>/<handler>#<attempt>`: app names hold no `/`; the attempt follows the last `#`.
    const std::size_t slash = name.find('/');
    const std::size_t hash_mark = name.rfind('#');
    if (slash == std::string::npos || hash_mark == std::string::npos || hash_mark < slash) {
      continue;
    }
    AttemptRecord record;
    record.app = name.substr(0, slash);
    record.handler = name.substr(slash + 1, hash_mark - slash - 1);
    try {
      record.attempt = std::stoi(name.substr(hash_mark + 1));
      const Json value = Json::parse(text);
      record.consumer = value.value("consumer", "");
      record.started_ms = value.value("started_ms", std::int64_t{0});
      record.finished_ms = value.value("finished_ms", std::int64_t{0});
      record.outcome = value.value("outcome", "");
      record.reason = value.value("reason", "");
      record.duration_ms = value.value("duration_ms", std::int64_t{0});
    } catch (const std::exception&) {
      continue;  // not a record this Relay wrote
    }
    records.push_back(std::move(record));
  }
  std::sort(records.begin(), records.end(), [](const AttemptRecord& a, const AttemptRecord& b) {
    return std::tie(a.app, a.handler, a.attempt) < std::tie(b.app, b.handler, b.attempt);
  });
  return records;
}

}  // namespace relay::stream
