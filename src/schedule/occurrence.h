#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace relay::schedule {

/// The stream-entry field that marks a schedule occurrence and holds its envelope
/// (docs/schedules.md "Publication"); the other field, `event`, holds the payload the handler gets
/// on stdin.
inline constexpr std::string_view kEnvelopeField = "relay_schedule";
/// The `source` member of every occurrence payload.
inline constexpr std::string_view kPayloadSource = "relay.schedule";

/// One firing of one schedule: the identity every worker computes alike, so the occurrence is
/// published once cluster-wide and a re-published duplicate is recognisable. A plain value.
struct Occurrence {
  std::string app;
  std::string schedule;
  WallTime scheduled_at;  // a whole second (fire times are whole minutes)

  /// `YYYY-MM-DDTHH:MM:SSZ`: the only spelling of scheduled_at in ids, keys and envelopes.
  std::string scheduledAtText() const;
  /// `schedule:<app>:<schedule>:<scheduled_at>`.
  std::string id() const;
  /// The `relay_schedule` field: compact JSON
  /// `{"app":...,"schedule":...,"scheduled_at":...,"occurrence_id":...}`.
  std::string envelope() const;
  /// The `event` field: compact JSON `{"source":"relay.schedule","app":...,"schedule":...,
  /// "scheduled_at":...,"payload":<payload_json>}`. `payload_json` must be a JSON object (the
  /// template's `payload`, validated when the app loaded); it is copied verbatim.
  std::string payload(std::string_view payload_json) const;

  bool operator==(const Occurrence&) const = default;
};

/// Reads an envelope back: a JSON object whose members `app`, `schedule`, `scheduled_at` and
/// `occurrence_id` are present and strings (other members are ignored), `scheduled_at` is
/// RFC 3339 UTC in whole seconds spelled exactly as scheduledAtText() spells it, and
/// `occurrence_id` equals the id recomputed from the other three. Anything else is
/// kInvalidArgument with a message naming the member and what was expected. Pure; never
/// throws.
Result<Occurrence> parseEnvelope(std::string_view json);

}  // namespace relay::schedule
