#include "history/replay_json.h"

#include "common/rfc3339.h"

namespace relay::history {
namespace {

std::string timeOfMs(std::int64_t ms) {
  return ms > 0 ? formatRfc3339(WallTime(std::chrono::milliseconds(ms))) : std::string("-");
}

}  // namespace

nlohmann::ordered_json replayJson(const ReplayStatus& replay) {
  using Json = nlohmann::ordered_json;
  const bool dlq = replay.spec.source == ReplaySpec::Source::kDeadLetters;
  Json json = {{"id", replay.id},
               {"state", replay.state},
               {"source", dlq ? "dlq" : "stream"},
               {"app", replay.spec.app},
               {"rule", replay.spec.handler},
               {"from", replay.spec.from},
               {"to", replay.spec.to},
               {"rate", replay.spec.rate},
               {"again", replay.spec.again},
               {"progress", replay.progress()},
               {"cursor", replay.cursor},
               {"scanned", replay.scanned},
               {"published", replay.published},
               {"skipped", replay.skipped},
               {"duplicates", replay.duplicates},
               {"driver", replay.driver},
               {"created", timeOfMs(replay.created_ms)},
               {"finished", replay.finished_ms > 0 ? Json(timeOfMs(replay.finished_ms)) : Json()},
               {"error", replay.error},
               {"missing", nullptr}};
  if (dlq) {
    json["dlq_filter"] = Json::parse(replay.spec.dlq_filter, nullptr, false);
    json["expected"] = replay.spec.expected;
  }
  if (!replay.missing_reason.empty()) {
    json["missing"] = {{"from", replay.missing_from},
                       {"to", replay.missing_to},
                       {"reason", replay.missing_reason}};
  }
  return json;
}

}  // namespace relay::history
