#include "stream/throughput_recorder.h"

#include <cmath>

#include "common/whole_number.h"

namespace relay::stream {
namespace {

// The metric families the history keeps, and the prefix of their fields.
struct Family {
  const char* metric;
  const char* label;
  const char* prefix;
};
constexpr Family kFamilies[] = {{"relay_events_total", "outcome", "events:"},
                                {"relay_invocations_total", "outcome", "invocations:"},
                                {"relay_dlq_entries_total", "reason", "dlq:"}};

}  // namespace

ThroughputRecorder::ThroughputRecorder(invocation::StreamKeys keys, observability::Metrics& metrics,
                                       Clock& clock, std::chrono::milliseconds ttl)
    : keys_(std::move(keys)), metrics_(metrics), clock_(clock), ttl_(ttl) {}

std::map<std::string, double> ThroughputRecorder::totals() const {
  std::map<std::string, double> totals;
  for (const Family& family : kFamilies) {
    for (const auto& [value, count] : metrics_.sumBy(family.metric, family.label)) {
      totals[family.prefix + value] = count;
    }
  }
  return totals;
}

void ThroughputRecorder::flush(redis::Connection& redis) {
  const std::map<std::string, double> now = totals();
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch()).count();
  const std::string key = keys_.minute(seconds / 60);
  std::vector<std::vector<std::string>> commands;
  for (const auto& [field, total] : now) {
    const auto delta = std::llround(total - flushed_[field]);
    if (delta > 0) commands.push_back({"HINCRBY", key, field, std::to_string(delta)});
  }
  if (commands.empty()) return;
  commands.push_back({"PEXPIRE", key, std::to_string(ttl_.count())});
  auto replies = redis.pipeline(commands);
  bool written = replies.ok();
  if (written) {
    for (const auto& reply : *replies) written = written && reply.ok();
  }
  if (!written) {
    // Nothing is marked flushed: the next flush adds the same deltas again. A partly applied
    // pipeline may then count some twice, which a chart tolerates better than a gap.
    metrics_.countRedisError("throughput");
    return;
  }
  flushed_ = now;
}

redis::Result<std::vector<MinuteCounts>> readThroughput(redis::Connection& redis,
                                                        const invocation::StreamKeys& keys,
                                                        std::int64_t first, std::int64_t last) {
  std::vector<std::vector<std::string>> commands;
  for (std::int64_t minute = first; minute <= last; ++minute) {
    commands.push_back({"HGETALL", keys.minute(minute)});
  }
  std::vector<MinuteCounts> out;
  if (commands.empty()) return out;
  auto replies = redis.pipeline(commands);
  if (!replies.ok()) return replies.error();
  for (std::size_t i = 0; i < replies->size(); ++i) {
    MinuteCounts counts;
    counts.minute = first + static_cast<std::int64_t>(i);
    const auto& reply = (*replies)[i];
    if (!reply.ok()) return reply.error();
    auto elements = reply->elements();
    if (!elements.ok()) return elements.error();
    for (std::size_t at = 0; at + 1 < elements->size(); at += 2) {
      auto name = (*elements)[at].string();
      auto value = (*elements)[at + 1].string();
      if (!name.ok() || !value.ok()) continue;
      long long count = 0;
      if (parseWholeNumber(*value, count)) counts.counts[std::string(*name)] = count;
    }
    out.push_back(std::move(counts));
  }
  return out;
}

}  // namespace relay::stream
