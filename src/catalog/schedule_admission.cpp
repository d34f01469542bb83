#include "catalog/schedule_admission.h"

#include <string_view>

#include "app/names.h"
#include "catalog/message_decoder.h"
#include "schedule/next_fire.h"

namespace relay::catalog {
namespace {

using Verdict = ScheduleAdmission::Verdict;

constexpr std::string_view kMalformed = "malformed schedule occurrence: ";

ScheduleAdmission malformed(ScheduleAdmission admission, std::string_view why) {
  admission.verdict = Verdict::kMalformed;
  admission.reason = std::string(kMalformed) + std::string(why);
  return admission;
}

// Whether the member `name` of the payload is the string `expected`; else says what it is.
std::optional<std::string> mismatch(const event::Value& payload, std::string_view name,
                                    std::string_view expected) {
  const std::optional<event::Value> member = payload.find(name);
  if (!member) return "event has no \"" + std::string(name) + "\" member";
  if (!member->isString() || member->string() != expected) {
    return "event \"" + std::string(name) + "\" does not match the envelope (expected \"" +
           std::string(expected) + "\")";
  }
  return std::nullopt;
}

}  // namespace

ScheduleAdmission admitSchedule(const app::Snapshot& snapshot, const invocation::Message& entry,
                                std::size_t max_event_bytes) {
  ScheduleAdmission admission;
  const bool has_event = entry.find("event") != nullptr;
  const DecodedMessage decoded = decodeMessage(entry, max_event_bytes);
  // What a DLQ entry records: the payload, or a summary of an oversized one.
  admission.dlq_event = decoded.dlq_event;
  const std::string* envelope = entry.find(schedule::kEnvelopeField);
  if (envelope == nullptr) return malformed(std::move(admission), "no relay_schedule field");
  auto occurrence = schedule::parseEnvelope(*envelope);
  if (!occurrence.ok()) {
    return malformed(std::move(admission), "relay_schedule: " + occurrence.error().message);
  }
  admission.occurrence = *occurrence;
  if (!app::isValidName(occurrence->app) || !app::isValidName(occurrence->schedule)) {
    return malformed(std::move(admission), "relay_schedule: app \"" + occurrence->app +
                                               "\" or schedule \"" + occurrence->schedule +
                                               "\" is not a valid name (" +
                                               std::string(app::kNamePattern) + ")");
  }

  const app::AppEntry* app_entry = snapshot.find(occurrence->app);
  if (app_entry == nullptr || !app_entry->app) {
    admission.verdict = Verdict::kObsolete;
    admission.reason = "app \"" + occurrence->app + "\" is not loaded";
    return admission;
  }
  admission.app = app_entry;
  const app::Schedule* found = app_entry->app->findSchedule(occurrence->schedule);
  if (found == nullptr) {
    admission.verdict = Verdict::kObsolete;
    admission.reason =
        "app \"" + occurrence->app + "\" has no schedule \"" + occurrence->schedule + "\"";
    return admission;
  }
  admission.schedule = found;

  if (!has_event) return malformed(std::move(admission), "no event field");
  if (decoded.kind != DecodedMessage::Kind::kEvent) {
    return malformed(std::move(admission), "event: " + decoded.reason);
  }
  const event::Value payload = decoded.event->root();
  for (const auto& [name, expected] :
       {std::pair<std::string_view, std::string>{"source", std::string(schedule::kPayloadSource)},
        {"app", occurrence->app},
        {"schedule", occurrence->schedule},
        {"scheduled_at", occurrence->scheduledAtText()}}) {
    if (auto why = mismatch(payload, name, expected)) {
      return malformed(std::move(admission), *why);
    }
  }

  if (!schedule::isFireTime(found->cron, found->time_zone, occurrence->scheduled_at)) {
    admission =
        malformed(std::move(admission), "scheduled_at " + occurrence->scheduledAtText() +
                                            " is not a firing of cron \"" + found->cron_text +
                                            "\" in " + found->time_zone.name());
    admission.verdict = Verdict::kNotAFiring;
    return admission;
  }
  admission.verdict = Verdict::kRun;
  return admission;
}

}  // namespace relay::catalog
