#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::observability {

/// Label set of one series, e.g. {{"app","users"},{"outcome","succeeded"}}; order is kept.
using Labels = std::vector<std::pair<std::string, std::string>>;

/// Relay's metrics (docs/operations.md "Metrics"): counters and gauges by name and labels, one
/// histogram of invocation durations, rendered in the Prometheus text format. Thread-safe; every
/// update is a short critical section, small next to a Redis round trip.
class Metrics {
 public:
  Metrics();

  // relay_events_total{outcome}: matched, unmatched, malformed, oversized, schedule,
  // obsolete_schedule, replay (a replay copy: docs/replay.md).
  void countEvent(std::string_view outcome);
  // relay_invocations_total{app,handler,outcome}: succeeded, failed, exhausted, unavailable,
  // blocked, cancelled, expired (a deadline or start timeout), and flow control's deferred,
  // deduplicated, superseded, retry_after. Any outcome makes its series on first use: there is
  // no list to extend.
  void countInvocation(std::string_view app, std::string_view handler, std::string_view outcome);
  // relay_invocation_duration_seconds
  void observeInvocationSeconds(double seconds);
  // relay_dlq_entries_total{reason}: handler, malformed, oversized, schedule.
  void countDlqEntry(std::string_view reason);
  void countMissingPayload();                            // relay_missing_payload_total
  void countScheduleRepublished();                       // relay_schedule_republished_total
  void countReclaimed(long long messages);               // relay_reclaimed_total
  void addInflight(int delta);                           // relay_inflight_invocations
  void setPending(long long messages);                   // relay_pending_messages
  void setReadyBacklog(long long messages);              // relay_ready_backlog
  void countIdleConsumersDeleted(long long consumers);   // relay_idle_consumers_deleted_total
  void countRedisError(std::string_view op);             // relay_redis_errors_total{op}
  void setAppPaused(std::string_view app, bool paused);  // relay_app_paused{app}
  // relay_redis_reconnects_total and relay_redis_failovers_total: the totals so far, kept by
  // the Redis endpoint (redis::Topology) and copied here before each exposition.
  void setRedisConnections(long long reconnects, long long failovers);
  // relay_redis_pipelines_total and relay_redis_pipelined_calls_total: the totals so far of the
  // worker's group commit (docs/pipeline.md "Group commit"), copied here before each exposition.
  void setGroupCommit(std::uint64_t pipelines, std::uint64_t calls);
  // relay_trimmed_entries_total{target}: stream, dlq (REDIS_STREAM_RETENTION/REDIS_DLQ_RETENTION).
  void countTrimmed(std::string_view target, long long entries);
  void countGroupRecreated();  // relay_group_recreated_total
  // relay_cancellations_total{app,handler}: running attempts this worker stopped because a
  // cancel named them (docs/pipeline.md "Cancellation").
  void countCancellation(std::string_view app, std::string_view handler);
  /// relay_oldest_pending_age_seconds, and relay_oldest_pending_info{id,consumer,reason} 1 for
  /// that message alone (no series while nothing is pending: empty `id`).
  void setOldestPending(double age_seconds, std::string_view id, std::string_view consumer,
                        std::string_view reason);
  /// relay_trim_held_back_seconds (the age of the pending entry that keeps retention from
  /// trimming, 0: none), and relay_trim_held_back_info{group,id,reason} 1 for it alone.
  void setTrimHeldBack(double age_seconds, std::string_view group, std::string_view id,
                       std::string_view reason);
  void countReplayCopies(long long copies);                         // relay_replay_copies_total
  void countArchived(std::string_view archive, long long entries);  // relay_archived_entries_total
  void countArchiveGap();                                           // relay_archive_gaps_total
  void setArchiveLag(double seconds);                               // relay_archive_lag_seconds

  /// Current value of a counter or gauge series (0 when it was never touched).
  double value(std::string_view name, const Labels& labels = {}) const;
  /// Every series of counter `name` summed by the value of `label` (e.g. relay_invocations_total
  /// by outcome, over every app and handler).
  std::map<std::string, double> sumBy(std::string_view name, std::string_view label) const;
  /// Number of observations in the duration histogram.
  long long durationCount() const;

  /// Every series in the Prometheus text exposition format (version 0.0.4).
  std::string exposition() const;

 private:
  struct Family {
    std::string help;
    std::string type;  // counter | gauge
    std::map<Labels, double> series;
  };
  void add(std::string_view name, Labels labels, double delta);
  void set(std::string_view name, Labels labels, double value);
  /// The family's only series becomes `labels` (none when `labels` is empty): an info metric.
  void replace(std::string_view name, Labels labels);

  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10,  60};
  mutable std::mutex mutex_;
  std::map<std::string, Family, std::less<>> families_;
  std::array<long long, kBuckets.size()> bucket_counts_{};
  long long duration_count_ = 0;
  double duration_sum_ = 0;
};

}  // namespace relay::observability
