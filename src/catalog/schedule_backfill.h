#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "app/app.h"
#include "catalog/occurrence_publication.h"
#include "common/clock.h"
#include "common/result.h"
#include "redis/connection.h"
#include "schedule/occurrence.h"

namespace relay::catalog {

/// What a backfill does with a missing occurrence while the schedule has an unfinished one
/// (docs/schedules.md "Backfill"), after Temporal's overlap policies of the same names.
enum class OverlapPolicy {
  /// Never start an occurrence while another of the schedule is unfinished: nothing while one
  /// is, else the earliest missing one only (the others would overlap it).
  kSkip,
  /// Publish every missing occurrence (they may run at the same time).
  kAll,
};

/// Where a backfill publishes, and for how long an occurrence's record proves it was published.
struct BackfillSettings {
  std::string stream = "events";
  std::string group = "relay";
  std::chrono::milliseconds record_ttl = kOccurrenceRecordTtl;
};

/// The fate of one occurrence of the window.
enum class BackfillOutcome {
  kWouldPublish,       // missing, and the policy lets it be published (what a dry run shows)
  kPublished,          // published by this backfill
  kAlreadyPublished,   // its record names an entry: the scheduler or an earlier backfill did
  kSkippedUnfinished,  // missing, held back: another occurrence of the schedule is unfinished
  kSkippedOverlap,     // missing, held back: it would overlap the one this backfill publishes
};

/// An occurrence of the schedule that has not finished: published, and not yet acknowledged by
/// the group (pending in its PEL, or not read yet).
struct UnfinishedOccurrence {
  WallTime scheduled_at;
  std::string message_id;
  bool delivered = false;  // in the group's PEL (false: not read by the group yet)
};

struct BackfillItem {
  schedule::Occurrence occurrence;
  BackfillOutcome outcome = BackfillOutcome::kWouldPublish;
  std::string message_id;  // kPublished, kAlreadyPublished: the entry's id
  /// kSkipped*: the occurrence it would overlap (the unfinished one, or the one published by
  /// this backfill).
  std::optional<UnfinishedOccurrence> overlaps;
};

/// Every fire time of the window, in order, with what happens to each.
struct BackfillPlan {
  std::vector<BackfillItem> items;
  /// With OverlapPolicy::kSkip: the earliest unfinished occurrence of the schedule among those
  /// published within the record's lifetime, if any.
  std::optional<UnfinishedOccurrence> unfinished;

  std::size_t count(BackfillOutcome outcome) const;
};

/// Publishes the occurrences of a past window that were never published (docs/schedules.md
/// "Backfill"): the fire times of the schedule's cron in its timezone between `from` and `to`,
/// each one whose record (the dedupe key) is missing, through the scheduler's own publication
/// script, so each occurrence is published once however the backfill races the scheduler or
/// another backfill, as the very entry the scheduler would have written. Thread-safe.
class ScheduleBackfill {
 public:
  explicit ScheduleBackfill(BackfillSettings settings);

  /// The window `[from, to]` must be past (`to <= now`) and within the record's lifetime
  /// (`from > now - record_ttl`): older records may have expired, and a missing record would no
  /// longer mean a missed occurrence. Anything else is an invalid-argument error (kConfig).
  /// Reads the records of the schedule's occurrences of the record's lifetime (GETs, pipelined),
  /// and with kSkip which of them the group has not acknowledged; writes nothing.
  Result<BackfillPlan> plan(redis::Connection& redis, const std::string& app,
                            const app::Schedule& schedule, WallTime from, WallTime to,
                            OverlapPolicy overlap, WallTime now) const;

  /// Publishes the plan's kWouldPublish items in order; each becomes kPublished, or
  /// kAlreadyPublished when someone published it since the plan was read. Stops at the first
  /// Redis error, leaving the items after it as they were.
  Status publish(redis::Connection& redis, const app::Schedule& schedule, BackfillPlan& plan) const;

  /// The most fire times one window may hold (every minute over the record's lifetime is
  /// 2880): a guard against an unbounded walk, never reached by a valid window.
  static constexpr std::size_t kMaxOccurrences = 100'000;

 private:
  /// Scheduled time -> entry id, for the occurrences of `times` that have a record.
  redis::Result<std::vector<std::optional<std::string>>> records(
      redis::Connection& redis, const std::string& app, const std::string& schedule,
      const std::vector<WallTime>& times) const;
  /// The earliest of `published` (scheduled time, entry id; in time order) the group has not
  /// acknowledged.
  redis::Result<std::optional<UnfinishedOccurrence>> firstUnfinished(
      redis::Connection& redis,
      const std::vector<std::pair<WallTime, std::string>>& published) const;

  BackfillSettings settings_;
  OccurrencePublication publication_;
};

}  // namespace relay::catalog
