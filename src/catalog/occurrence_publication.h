#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "redis/connection.h"
#include "redis/script.h"
#include "schedule/occurrence.h"

namespace relay::catalog {

/// Lifetime of an occurrence's dedupe key (docs/schedules.md "Publication"): longer than the
/// catch-up window, and the span within which a backfill can tell a missed occurrence from a
/// published one (docs/schedules.md "Backfill").
inline constexpr std::chrono::milliseconds kOccurrenceRecordTtl = std::chrono::hours(48);

/// The one script that publishes a schedule occurrence (docs/schedules.md "Publication"): it
/// XADDs the entry and sets its dedupe key `relay:<stream>:occ:<app>:<schedule>:<scheduled-at>`
/// to the entry's id only when the key is missing, atomically, so however many workers and
/// backfills run it for one occurrence, one entry is published. The scheduler and `relay
/// schedule backfill` both publish through it: the same entry, the same record. Immutable,
/// thread-safe (the connection is the caller's).
class OccurrencePublication {
 public:
  OccurrencePublication(std::string stream, std::chrono::milliseconds record_ttl);

  /// Publishes one occurrence with its payload (the template's `payload`, a JSON object): the
  /// new entry's id (`published`), or the id its record holds when it was already published.
  struct Outcome {
    bool published = false;
    std::string message_id;
  };
  redis::Result<Outcome> publish(redis::Connection& redis, const schedule::Occurrence& occurrence,
                                 std::string_view payload_json) const;

  const std::string& stream() const { return stream_; }

 private:
  std::string stream_;
  std::chrono::milliseconds record_ttl_;
  redis::Script script_;
};

}  // namespace relay::catalog
