#include "invocation/attempt_journal.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/whole_number.h"
#include "invocation/keys.h"

namespace relay::invocation {
namespace {

using Json = nlohmann::json;

}  // namespace

std::string attemptField(const AttemptRecord& record) {
  return invocationField(record.app, record.handler) + "#" + std::to_string(record.attempt);
}

std::string encodeAttempt(const AttemptRecord& record) {
  Json value = {{"consumer", record.consumer}, {"started_ms", record.started_ms}};
  if (record.finished_ms != 0) {
    value["finished_ms"] = record.finished_ms;
    value["outcome"] = record.outcome;
    value["reason"] = record.reason;
    value["duration_ms"] = record.duration_ms;
  }
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
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
    if (!parseWholeNumber(std::string_view(name).substr(hash_mark + 1), record.attempt)) continue;
    try {
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

}  // namespace relay::invocation
