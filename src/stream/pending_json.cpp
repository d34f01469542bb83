#include "stream/pending_json.h"

namespace relay::stream {

nlohmann::ordered_json pendingJson(const PendingReport& report) {
  using Json = nlohmann::ordered_json;
  const PendingReason& reason = report.reason;
  Json out = {{"id", report.entry.id},
              {"consumer", report.entry.consumer},
              {"idle_ms", report.entry.idle_ms},
              {"deliveries", report.entry.deliveries},
              {"age_ms", report.age_ms},
              {"parked", report.parked},
              {"owner_alive", report.owner_alive},
              {"due_at_ms", report.due_at_ms ? Json(*report.due_at_ms) : Json()}};
  if (report.payload_exists) out["payload_exists"] = *report.payload_exists;
  out["plan"] = report.plan;
  Json why = {{"kind", kindName(reason.kind)}};
  if (!reason.app.empty()) {
    why["app"] = reason.app;
    why["handler"] = reason.handler;
  }
  if (reason.attempt > 0) why["attempt"] = reason.attempt;
  if (reason.until_ms > 0) why["until_ms"] = reason.until_ms;
  if (!reason.detail.empty()) why["detail"] = reason.detail;
  out["reason"] = std::move(why);
  out["description"] = describe(report);
  return out;
}

}  // namespace relay::stream
