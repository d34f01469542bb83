#include "catalog/schedule_backfill.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "catalog/publication_check.h"
#include "common/duration.h"
#include "common/rfc3339.h"
#include "schedule/fire_window.h"

namespace relay::catalog {
namespace {

// Commands per pipeline: an every-minute schedule has 2880 records in 48 h.
constexpr std::size_t kBatch = 500;

// `<ms>-<seq>` as a comparable pair; nullopt for anything else.
std::optional<std::pair<std::uint64_t, std::uint64_t>> entryId(std::string_view id) {
  const std::size_t dash = id.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;
  const auto parse = [](std::string_view text, std::uint64_t& value) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size() && !text.empty();
  };
  if (!parse(id.substr(0, dash), ms) || !parse(id.substr(dash + 1), seq)) return std::nullopt;
  return std::pair{ms, seq};
}

// Where the group stands on the stream (XINFO GROUPS).
struct GroupPosition {
  bool stream_exists = false;
  std::optional<std::string> last_delivered;  // nullopt: no such group (it read nothing)
};

redis::Result<GroupPosition> groupPosition(redis::Connection& redis, const std::string& stream,
                                           const std::string& group) {
  auto reply = redis.command({"XINFO", "GROUPS", stream});
  if (!reply.ok()) {
    // "ERR no such key": no stream, so none of its entries can be unfinished.
    if (redis::isReplyError(reply.error(), "ERR")) return GroupPosition{};
    return reply.error();
  }
  auto groups = reply->elements();
  if (!groups.ok()) return groups.error();
  GroupPosition position{true, std::nullopt};
  for (const redis::ReplyView& info : *groups) {
    auto fields = info.elements();
    if (!fields.ok()) return fields.error();
    std::optional<std::string> name;
    std::optional<std::string> last;
    for (std::size_t i = 0; i + 1 < fields->size(); i += 2) {
      auto key = (*fields)[i].string();
      if (!key.ok()) continue;
      auto value = (*fields)[i + 1].string();
      if (!value.ok()) continue;
      if (*key == "name") name = std::string(*value);
      if (*key == "last-delivered-id") last = std::string(*value);
    }
    if (name == group && last) position.last_delivered = last;
  }
  return position;
}

}  // namespace

std::size_t BackfillPlan::count(BackfillOutcome outcome) const {
  return static_cast<std::size_t>(
      std::count_if(items.begin(), items.end(),
                    [&](const BackfillItem& item) { return item.outcome == outcome; }));
}

ScheduleBackfill::ScheduleBackfill(BackfillSettings settings)
    : settings_(std::move(settings)), publication_(settings_.stream, settings_.record_ttl) {}

redis::Result<std::vector<std::optional<std::string>>> ScheduleBackfill::records(
    redis::Connection& redis, const std::string& app, const std::string& schedule,
    const std::vector<WallTime>& times) const {
  std::vector<std::optional<std::string>> ids;
  ids.reserve(times.size());
  for (std::size_t start = 0; start < times.size(); start += kBatch) {
    std::vector<std::vector<std::string>> gets;
    for (std::size_t i = start; i < std::min(times.size(), start + kBatch); ++i) {
      gets.push_back({"GET", occurrenceKey(settings_.stream, {app, schedule, times[i]})});
    }
    auto replies = redis.pipeline(gets);
    if (!replies.ok()) return replies.error();
    for (auto& reply : *replies) {
      if (!reply.ok()) return reply.error();
      auto value = reply->optionalString();
      if (!value.ok()) return value.error();
      ids.push_back(*value ? std::optional<std::string>(std::string(**value)) : std::nullopt);
    }
  }
  return ids;
}

redis::Result<std::optional<UnfinishedOccurrence>> ScheduleBackfill::firstUnfinished(
    redis::Connection& redis,
    const std::vector<std::pair<WallTime, std::string>>& published) const {
  if (published.empty()) return std::optional<UnfinishedOccurrence>();
  auto position = groupPosition(redis, settings_.stream, settings_.group);
  if (!position.ok()) return position.error();
  if (!position->stream_exists) return std::optional<UnfinishedOccurrence>();
  const auto delivered_up_to =
      position->last_delivered ? entryId(*position->last_delivered) : std::nullopt;
  for (std::size_t start = 0; start < published.size(); start += kBatch) {
    const std::size_t end = std::min(published.size(), start + kBatch);
    std::vector<std::vector<std::string>> pending;
    for (std::size_t i = start; i < end; ++i) {
      const std::string& id = published[i].second;
      pending.push_back({"XPENDING", settings_.stream, settings_.group, id, id, "1"});
    }
    auto replies = redis.pipeline(pending);
    if (!replies.ok()) return replies.error();
    for (std::size_t i = start; i < end; ++i) {
      auto& reply = (*replies)[i - start];
      const auto [scheduled_at, id] = published[i];
      // Not read by the group yet (or no group at all: it will read it when created).
      const auto parsed = entryId(id);
      if (!delivered_up_to || (parsed && *parsed > *delivered_up_to)) {
        return std::optional<UnfinishedOccurrence>(UnfinishedOccurrence{scheduled_at, id, false});
      }
      if (!reply.ok()) {
        if (redis::isReplyError(reply.error(), "NOGROUP")) continue;
        return reply.error();
      }
      if (reply->size() > 0) {
        return std::optional<UnfinishedOccurrence>(UnfinishedOccurrence{scheduled_at, id, true});
      }
    }
  }
  return std::optional<UnfinishedOccurrence>();
}

Result<BackfillPlan> ScheduleBackfill::plan(redis::Connection& redis, const std::string& app,
                                            const app::Schedule& schedule, WallTime from,
                                            WallTime to, OverlapPolicy overlap,
                                            WallTime now) const {
  const WallTime oldest = now - settings_.record_ttl;
  if (from > to) {
    return Error::invalid("the window starts (" + formatRfc3339(from) + ") after it ends (" +
                          formatRfc3339(to) + ")");
  }
  if (to > now) {
    return Error::invalid("the window ends (" + formatRfc3339(to) + ") after now (" +
                          formatRfc3339(now) + ")");
  }
  if (from <= oldest) {
    return Error::invalid("the window starts (" + formatRfc3339(from) + ") " +
                          formatDuration(settings_.record_ttl) +
                          " or more ago, beyond the occurrence records");
  }
  // Every occurrence whose record can still exist: the window's, and the ones an unfinished
  // invocation may belong to. The window is within it (validated above).
  const std::vector<WallTime> times =
      schedule::fireTimesWithin(schedule.cron, schedule.time_zone,
                                oldest + std::chrono::milliseconds(1), now, kMaxOccurrences);
  auto ids = records(redis, app, schedule.name, times);
  if (!ids.ok()) return ids.error().toRelay();

  BackfillPlan plan;
  if (overlap == OverlapPolicy::kSkip) {
    std::vector<std::pair<WallTime, std::string>> published;
    for (std::size_t i = 0; i < times.size(); ++i) {
      if ((*ids)[i]) published.emplace_back(times[i], *(*ids)[i]);
    }
    auto unfinished = firstUnfinished(redis, published);
    if (!unfinished.ok()) return unfinished.error().toRelay();
    plan.unfinished = std::move(*unfinished);
  }
  std::optional<UnfinishedOccurrence> chosen;  // kSkip: the one missing occurrence to publish
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (times[i] < from || times[i] > to) continue;
    BackfillItem item{{app, schedule.name, times[i]}, BackfillOutcome::kWouldPublish, {}, {}};
    if ((*ids)[i]) {
      item.outcome = BackfillOutcome::kAlreadyPublished;
      item.message_id = *(*ids)[i];
    } else if (overlap == OverlapPolicy::kSkip && plan.unfinished) {
      item.outcome = BackfillOutcome::kSkippedUnfinished;
      item.overlaps = plan.unfinished;
    } else if (overlap == OverlapPolicy::kSkip && chosen) {
      item.outcome = BackfillOutcome::kSkippedOverlap;
      item.overlaps = chosen;
    } else if (overlap == OverlapPolicy::kSkip) {
      chosen = UnfinishedOccurrence{times[i], {}, false};
    }
    plan.items.push_back(std::move(item));
  }
  return plan;
}

Status ScheduleBackfill::publish(redis::Connection& redis, const app::Schedule& schedule,
                                 BackfillPlan& plan) const {
  for (BackfillItem& item : plan.items) {
    if (item.outcome != BackfillOutcome::kWouldPublish) continue;
    auto outcome = publication_.publish(redis, item.occurrence, schedule.payload_json);
    if (!outcome.ok()) return outcome.error().toRelay();
    item.outcome =
        outcome->published ? BackfillOutcome::kPublished : BackfillOutcome::kAlreadyPublished;
    item.message_id = std::move(outcome->message_id);
    // The occurrences skipped as overlapping this one name its entry from now on.
    for (BackfillItem& later : plan.items) {
      if (later.outcome == BackfillOutcome::kSkippedOverlap && later.overlaps &&
          later.overlaps->scheduled_at == item.occurrence.scheduled_at) {
        later.overlaps->message_id = item.message_id;
      }
    }
  }
  return {};
}

}  // namespace relay::catalog
