#include "cli/backtest.h"

#include <map>
#include <utility>

#include "catalog/message_decoder.h"
#include "schedule/occurrence.h"
#include "stream/stream_id.h"

namespace relay::cli {
namespace {

// The instant of an entry id's milliseconds: when XADD * published it.
Instant publishedAt(const std::string& id) {
  const std::optional<stream::StreamId> parsed = stream::StreamId::parse(id);
  const auto ms = static_cast<std::int64_t>(parsed ? parsed->ms : 0);
  return Instant{ms / 1000, static_cast<std::int32_t>(ms % 1000) * 1'000'000};
}

std::unique_ptr<const catalog::Classifier> classifierOf(
    std::shared_ptr<const app::Snapshot> snapshot) {
  if (!snapshot) return nullptr;
  return std::make_unique<const catalog::Classifier>(std::move(snapshot));
}

}  // namespace

Backtest::Backtest(std::shared_ptr<const app::Snapshot> candidate,
                   std::shared_ptr<const app::Snapshot> deployed, std::size_t max_event_bytes,
                   std::size_t samples)
    : max_event_bytes_(max_event_bytes), samples_(samples) {
  candidate_.classifier = classifierOf(std::move(candidate));
  deployed_.classifier = classifierOf(std::move(deployed));
}

bool Backtest::count(Side& side, const event::Event& event, Instant now,
                     const std::string& id) const {
  if (!side.classifier) return false;
  const std::vector<catalog::Match> matches = side.classifier->classify(event, now);
  for (const catalog::Match& match : matches) {
    RuleCount& count = side.counts[match.rule];
    ++count.matches;
    if (count.samples.size() < samples_) count.samples.push_back(id);
  }
  return !matches.empty();
}

void Backtest::add(const stream::StreamEntry& entry) {
  ++entries_;
  if (newest_.empty()) newest_ = entry.id;
  oldest_ = entry.id;
  // Relay's own occurrences never go through classification (docs/schedules.md).
  if (entry.find(schedule::kEnvelopeField)) {
    ++schedules_;
    return;
  }
  const catalog::DecodedMessage decoded = catalog::decodeMessage(entry, max_event_bytes_);
  if (decoded.kind == catalog::DecodedMessage::Kind::kOversized) {
    ++oversized_;
    return;
  }
  if (decoded.kind != catalog::DecodedMessage::Kind::kEvent) {
    ++malformed_;
    return;
  }
  ++events_;
  const Instant now = publishedAt(entry.id);
  if (!count(candidate_, *decoded.event, now, entry.id)) ++unmatched_candidate_;
  if (deployed_.classifier && !count(deployed_, *decoded.event, now, entry.id)) {
    ++unmatched_deployed_;
  }
}

std::vector<RuleRow> Backtest::rows() const {
  std::vector<RuleRow> rows;
  std::map<std::pair<std::string, std::string>, std::size_t> by_name;
  const auto countOf = [](const Side& side, const app::Rule& rule) {
    const auto found = side.counts.find(&rule);
    return found == side.counts.end() ? RuleCount{} : found->second;
  };
  // The same rules the classifier indexes: loaded apps, dispatch order.
  const auto each_rule = [](const Side& side, const auto& visit) {
    if (!side.classifier) return;
    for (const app::AppEntry& entry : side.classifier->snapshot().apps()) {
      if (!entry.status.loaded || !entry.app) continue;
      for (const app::Rule& rule : entry.app->rules) visit(entry, rule);
    }
  };
  each_rule(candidate_, [&](const app::AppEntry& entry, const app::Rule& rule) {
    by_name[{entry.name, rule.handler}] = rows.size();
    rows.push_back({entry.name, rule.handler, rule.line, countOf(candidate_, rule), std::nullopt});
  });
  each_rule(deployed_, [&](const app::AppEntry& entry, const app::Rule& rule) {
    const auto found = by_name.find({entry.name, rule.handler});
    if (found != by_name.end()) {
      rows[found->second].deployed = countOf(deployed_, rule);
    } else {
      rows.push_back({entry.name, rule.handler, rule.line, std::nullopt, countOf(deployed_, rule)});
    }
  });
  return rows;
}

}  // namespace relay::cli
