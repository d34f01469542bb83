#include "observability/metrics.h"

#include <cstdio>
#include <cstdlib>

namespace relay::observability {
namespace {

// Prometheus label values escape backslash, double quote and newline.
std::string escape(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string formatLabels(const Labels& labels, std::string_view extra = {}) {
  if (labels.empty() && extra.empty()) return {};
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name + "=\"" + escape(value) + "\"";
  }
  if (!extra.empty()) {
    if (!first) out += ',';
    out += extra;
  }
  return out + "}";
}

// The shortest text that reads back as the same double: `0.025`, not `0.025000000000000001`
// (bucket bounds are matched by their `le` text).
std::string formatNumber(double value) {
  char buffer[64];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

}  // namespace

Metrics::Metrics() {
  const auto declare = [this](const char* name, const char* type, const char* help) {
    families_[name] = Family{help, type, {}};
  };
  declare("relay_events_total", "counter", "Stream messages by classification outcome.");
  declare("relay_invocations_total", "counter", "Handler invocations by outcome.");
  declare("relay_dlq_entries_total", "counter", "Dead-letter entries written, by reason.");
  declare("relay_missing_payload_total", "counter",
          "Reclaimed PEL entries whose stream body no longer existed (data loss).");
  declare("relay_reclaimed_total", "counter", "Messages reclaimed from idle consumers.");
  declare("relay_schedule_republished_total", "counter",
          "Schedule occurrences Redis lost after they were published (a failover), published "
          "again.");
  declare("relay_inflight_invocations", "gauge", "Handler invocations running now.");
  declare("relay_pending_messages", "gauge", "Messages of the group still pending (PEL size).");
  declare("relay_ready_backlog", "gauge",
          "Messages runnable now: undelivered lag plus pending not waiting for a backoff or a "
          "pause (the autoscaling signal).");
  declare("relay_idle_consumers_deleted_total", "counter",
          "Consumers of the group deleted after idling with nothing pending.");
  declare("relay_redis_errors_total", "counter", "Failed Redis operations, by operation.");
  declare("relay_app_paused", "gauge",
          "1 while an app is paused cluster-wide (relay app pause), 0 once resumed.");
  declare("relay_redis_reconnects_total", "counter",
          "Redis connections re-established after one broke, and cluster redirects followed.");
  declare("relay_redis_failovers_total", "counter",
          "Times the Redis master changed (sentinel failover, cluster slot moved).");
  declare("relay_redis_pipelines_total", "counter",
          "Pipelines the worker's group commit sent: one round trip each (docs/pipeline.md).");
  declare("relay_redis_pipelined_calls_total", "counter",
          "Lifecycle script calls sent in those pipelines.");
  declare("relay_trimmed_entries_total", "counter",
          "Entries removed by retention, from the source stream or the DLQ.");
  declare("relay_group_recreated_total", "counter",
          "Times this worker found the consumer group missing and re-created it at its recorded "
          "position.");
  declare("relay_cancellations_total", "counter",
          "Running attempts this worker stopped because relay cancel named them.");
  declare("relay_oldest_pending_age_seconds", "gauge",
          "Age of the group's oldest pending message (0: nothing pending).");
  declare("relay_oldest_pending_info", "gauge",
          "1 for the group's oldest pending message: its id, owner and why it is pending.");
  declare("relay_trim_held_back_seconds", "gauge",
          "Age of the pending entry that keeps retention from trimming older entries (0: none).");
  declare("relay_trim_held_back_info", "gauge",
          "1 for the pending entry that holds stream trimming back: its group, id and reason.");
  declare("relay_replay_copies_total", "counter",
          "Replay copies this worker published into the stream (docs/replay.md).");
  declare("relay_archived_entries_total", "counter",
          "Stream entries this worker copied into an archive, by archive (docs/replay.md).");
  declare("relay_archive_gaps_total", "counter",
          "Stretches of the stream trimmed before the archiver copied them: lost to replay "
          "(docs/replay.md).");
  declare("relay_archive_lag_seconds", "gauge",
          "Age of the oldest stream entry the archiver has not read yet (0: caught up).");
  families_["relay_group_recreated_total"].series[{}] = 0;
  families_["relay_missing_payload_total"].series[{}] = 0;
  families_["relay_reclaimed_total"].series[{}] = 0;
  families_["relay_schedule_republished_total"].series[{}] = 0;
  families_["relay_idle_consumers_deleted_total"].series[{}] = 0;
  families_["relay_replay_copies_total"].series[{}] = 0;
  families_["relay_archive_gaps_total"].series[{}] = 0;
  families_["relay_inflight_invocations"].series[{}] = 0;
  families_["relay_redis_reconnects_total"].series[{}] = 0;
  families_["relay_redis_failovers_total"].series[{}] = 0;
  families_["relay_redis_pipelines_total"].series[{}] = 0;
  families_["relay_redis_pipelined_calls_total"].series[{}] = 0;
}

void Metrics::add(std::string_view name, Labels labels, double delta) {
  std::lock_guard lock(mutex_);
  families_.find(name)->second.series[std::move(labels)] += delta;
}

void Metrics::set(std::string_view name, Labels labels, double value) {
  std::lock_guard lock(mutex_);
  families_.find(name)->second.series[std::move(labels)] = value;
}

void Metrics::replace(std::string_view name, Labels labels) {
  std::lock_guard lock(mutex_);
  auto& series = families_.find(name)->second.series;
  series.clear();
  if (!labels.empty()) series[std::move(labels)] = 1;
}

std::map<std::string, double> Metrics::sumBy(std::string_view name, std::string_view label) const {
  std::map<std::string, double> sums;
  std::lock_guard lock(mutex_);
  const auto family = families_.find(name);
  if (family == families_.end()) return sums;
  for (const auto& [labels, value] : family->second.series) {
    for (const auto& [key, text] : labels) {
      if (key == label) sums[text] += value;
    }
  }
  return sums;
}

void Metrics::countEvent(std::string_view outcome) {
  add("relay_events_total", {{"outcome", std::string(outcome)}}, 1);
}

void Metrics::countInvocation(std::string_view app, std::string_view handler,
                              std::string_view outcome) {
  add("relay_invocations_total",
      {{"app", std::string(app)},
       {"handler", std::string(handler)},
       {"outcome", std::string(outcome)}},
      1);
}

void Metrics::observeInvocationSeconds(double seconds) {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++bucket_counts_[i];
  }
  ++duration_count_;
  duration_sum_ += seconds;
}

void Metrics::countDlqEntry(std::string_view reason) {
  add("relay_dlq_entries_total", {{"reason", std::string(reason)}}, 1);
}

void Metrics::countMissingPayload() { add("relay_missing_payload_total", {}, 1); }

void Metrics::countScheduleRepublished() { add("relay_schedule_republished_total", {}, 1); }

void Metrics::countReclaimed(long long messages) {
  add("relay_reclaimed_total", {}, static_cast<double>(messages));
}

void Metrics::addInflight(int delta) { add("relay_inflight_invocations", {}, delta); }

void Metrics::setPending(long long messages) {
  set("relay_pending_messages", {}, static_cast<double>(messages));
}

void Metrics::setReadyBacklog(long long messages) {
  set("relay_ready_backlog", {}, static_cast<double>(messages));
}

void Metrics::countIdleConsumersDeleted(long long consumers) {
  add("relay_idle_consumers_deleted_total", {}, static_cast<double>(consumers));
}

void Metrics::countRedisError(std::string_view op) {
  add("relay_redis_errors_total", {{"op", std::string(op)}}, 1);
}

void Metrics::setAppPaused(std::string_view app, bool paused) {
  set("relay_app_paused", {{"app", std::string(app)}}, paused ? 1 : 0);
}

void Metrics::setRedisConnections(long long reconnects, long long failovers) {
  set("relay_redis_reconnects_total", {}, static_cast<double>(reconnects));
  set("relay_redis_failovers_total", {}, static_cast<double>(failovers));
}

void Metrics::setGroupCommit(std::uint64_t pipelines, std::uint64_t calls) {
  set("relay_redis_pipelines_total", {}, static_cast<double>(pipelines));
  set("relay_redis_pipelined_calls_total", {}, static_cast<double>(calls));
}

void Metrics::countTrimmed(std::string_view target, long long entries) {
  add("relay_trimmed_entries_total", {{"target", std::string(target)}},
      static_cast<double>(entries));
}

void Metrics::countGroupRecreated() { add("relay_group_recreated_total", {}, 1); }

void Metrics::countCancellation(std::string_view app, std::string_view handler) {
  add("relay_cancellations_total", {{"app", std::string(app)}, {"handler", std::string(handler)}},
      1);
}

void Metrics::setOldestPending(double age_seconds, std::string_view id, std::string_view consumer,
                               std::string_view reason) {
  set("relay_oldest_pending_age_seconds", {}, age_seconds);
  replace("relay_oldest_pending_info", id.empty() ? Labels{}
                                                  : Labels{{"id", std::string(id)},
                                                           {"consumer", std::string(consumer)},
                                                           {"reason", std::string(reason)}});
}

void Metrics::setTrimHeldBack(double age_seconds, std::string_view group, std::string_view id,
                              std::string_view reason) {
  set("relay_trim_held_back_seconds", {}, age_seconds);
  replace("relay_trim_held_back_info", id.empty() ? Labels{}
                                                  : Labels{{"group", std::string(group)},
                                                           {"id", std::string(id)},
                                                           {"reason", std::string(reason)}});
}

void Metrics::countReplayCopies(long long copies) {
  add("relay_replay_copies_total", {}, static_cast<double>(copies));
}

void Metrics::countArchived(std::string_view archive, long long entries) {
  add("relay_archived_entries_total", {{"archive", std::string(archive)}},
      static_cast<double>(entries));
}

void Metrics::countArchiveGap() { add("relay_archive_gaps_total", {}, 1); }

void Metrics::setArchiveLag(double seconds) { set("relay_archive_lag_seconds", {}, seconds); }

double Metrics::value(std::string_view name, const Labels& labels) const {
  std::lock_guard lock(mutex_);
  const auto family = families_.find(name);
  if (family == families_.end()) return 0;
  const auto series = family->second.series.find(labels);
  return series == family->second.series.end() ? 0 : series->second;
}

long long Metrics::durationCount() const {
  std::lock_guard lock(mutex_);
  return duration_count_;
}

std::string Metrics::exposition() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, family] : families_) {
    out += "# HELP " + name + " " + family.help + "\n";
    out += "# TYPE " + name + " " + family.type + "\n";
    for (const auto& [labels, value] : family.series) {
      out += name + formatLabels(labels) + " " + formatNumber(value) + "\n";
    }
  }
  const std::string histogram = "relay_invocation_duration_seconds";
  out += "# HELP " + histogram + " Wall time of handler invocations.\n";
  out += "# TYPE " + histogram + " histogram\n";
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    out += histogram + "_bucket{le=\"" + formatNumber(kBuckets[i]) + "\"} " +
           std::to_string(bucket_counts_[i]) + "\n";
  }
  out += histogram + "_bucket{le=\"+Inf\"} " + std::to_string(duration_count_) + "\n";
  out += histogram + "_sum " + formatNumber(duration_sum_) + "\n";
  out += histogram + "_count " + std::to_string(duration_count_) + "\n";
  return out;
}

}  // namespace relay::observability
