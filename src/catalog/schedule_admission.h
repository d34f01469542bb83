#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "app/snapshot.h"
#include "invocation/message.h"
#include "schedule/occurrence.h"

namespace relay::catalog {

/// The consumer's verdict on one `relay_schedule` message, before anything runs.
struct ScheduleAdmission {
  enum class Verdict {
    kRun,         // a real occurrence of a schedule that exists: run its current handler
    kObsolete,    // well-formed, but the app or the schedule is not known here
    kNotAFiring,  // well-formed, but scheduled_at is not a firing of the schedule's current
                  // cron: another cron's occurrence if Relay published it, else malformed
    kMalformed,   // can never be run: dead-letter, then acknowledge
  };
  Verdict verdict = Verdict::kMalformed;
  std::optional<schedule::Occurrence> occurrence;  // once the envelope parsed
  const app::AppEntry* app = nullptr;              // once the app is known (into the snapshot)
  const app::Schedule* schedule = nullptr;         // once the schedule is known
  std::string reason;     // kObsolete, kNotAFiring, kMalformed: why, for the log and the DLQ entry
  std::string dlq_event;  // kMalformed: what the DLQ entry's `event` records
};

/// Checks a message carrying `relay_schedule` against the apps of `snapshot` (docs/schedules.md
/// "Consumption"): the envelope parses (schedule::parseEnvelope: members present and strings, the
/// id recomputes, scheduled_at whole-second UTC), the names are valid app/schedule names, the app
/// is loaded and has the schedule (else obsolete), the `event` field is the occurrence payload
/// of this very occurrence (a JSON object within `max_event_bytes` whose source, app, schedule
/// and scheduled_at agree with the envelope), and scheduled_at is a real firing of the
/// schedule's CURRENT cron in its timezone (else kNotAFiring, whose reason is the malformed
/// one). Pure; the pointers point into `snapshot`.
ScheduleAdmission admitSchedule(const app::Snapshot& snapshot, const invocation::Message& entry,
                                std::size_t max_event_bytes);

}  // namespace relay::catalog
