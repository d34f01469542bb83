#include "catalog/schedule_publisher.h"

#include <algorithm>
#include <memory>

#include "catalog/publication_check.h"

namespace relay::catalog {
namespace {

std::string scheduleKey(const std::string& app, const std::string& schedule) {
  return app + "/" + schedule;  // neither name can hold a '/'
}

}  // namespace

SchedulePublisher::SchedulePublisher(PublisherSettings settings, redis::Endpoint endpoint,
                                     const app::Registry& registry, observability::Metrics& metrics,
                                     observability::Logger& logger, Clock& clock)
    : settings_(std::move(settings)),
      endpoint_(std::move(endpoint)),
      registry_(registry),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      publication_(settings_.stream, settings_.dedupe_ttl),
      planner_(settings_.catch_up_window, settings_.recheck_window,
               settings_.recheck_per_schedule) {}

std::string SchedulePublisher::dedupeKey(const schedule::Occurrence& occurrence) const {
  return occurrenceKey(settings_.stream, occurrence);
}

redis::Result<std::optional<std::string>> SchedulePublisher::publish(
    redis::Connection& redis, const schedule::Occurrence& occurrence,
    std::string_view payload_json) {
  auto outcome = publication_.publish(redis, occurrence, payload_json);
  if (!outcome.ok()) return outcome.error();
  if (!outcome->published) return std::optional<std::string>();
  return std::optional<std::string>(std::move(outcome->message_id));
}

bool SchedulePublisher::recheck(redis::Connection& redis, const app::Snapshot& snapshot,
                                PublishRound& round) {
  const std::vector<schedule::RecentOccurrence> recent = planner_.recent();
  if (recent.empty()) return true;
  std::vector<std::string> exists = {"EXISTS"};
  std::vector<schedule::Occurrence> occurrences;
  for (const schedule::RecentOccurrence& dealt : recent) {
    const std::size_t slash = dealt.key.find('/');
    occurrences.push_back(
        {dealt.key.substr(0, slash), dealt.key.substr(slash + 1), dealt.scheduled_at});
    exists.push_back(dedupeKey(occurrences.back()));
  }
  auto present = redis.command(exists);
  auto count = present.ok() ? present->integer() : redis::Result<long long>(present.error());
  if (!count.ok()) {
    metrics_.countRedisError("schedule_publish");
    logger_.warn("checking recent schedule occurrences failed", {{"error", count.error().message}});
    return false;
  }
  if (*count == static_cast<long long>(occurrences.size())) return true;
  // Some were lost (a failover or a restart undid them): the publish script puts back exactly
  // the ones whose key is missing, and is a no-op for the others.
  for (const schedule::Occurrence& occurrence : occurrences) {
    const app::AppEntry* entry = snapshot.find(occurrence.app);
    const app::Schedule* found =
        entry && entry->app ? entry->app->findSchedule(occurrence.schedule) : nullptr;
    if (found == nullptr) continue;  // removed since: nothing to run it any more
    auto published = publish(redis, occurrence, found->payload_json);
    if (!published.ok()) {
      metrics_.countRedisError("schedule_publish");
      logger_.warn("publishing a schedule occurrence failed",
                   {{"app", occurrence.app},
                    {"schedule", occurrence.schedule},
                    {"scheduled_at", occurrence.scheduledAtText()},
                    {"error", published.error().message}});
      return false;
    }
    if (!published->has_value()) continue;
    ++round.republished;
    metrics_.countScheduleRepublished();
    logger_.warn("schedule occurrence lost by redis published again",
                 {{"app", occurrence.app},
                  {"schedule", occurrence.schedule},
                  {"scheduled_at", occurrence.scheduledAtText()},
                  {"message_id", **published}});
  }
  return true;
}

PublishRound SchedulePublisher::publishDue(redis::Connection& redis) {
  PublishRound round;
  const std::shared_ptr<const app::Snapshot> snapshot = registry_.snapshot();
  planner_.beginRound(clock_.now());
  if (!recheck(redis, *snapshot, round)) {
    round.complete = false;
    return round;
  }
  for (const app::AppEntry& entry : snapshot->apps()) {
    // A loaded app keeps publishing while unavailable: its occurrences wait in the PEL.
    if (!entry.app) continue;
    for (const app::Schedule& schedule : entry.app->schedules) {
      const std::string key = scheduleKey(entry.name, schedule.name);
      const std::optional<WallTime> due = planner_.due(key, schedule.cron, schedule.time_zone);
      if (!due) {
        planner_.markDone(key);
        continue;
      }
      const schedule::Occurrence occurrence{entry.name, schedule.name, *due};
      auto published = publish(redis, occurrence, schedule.payload_json);
      observability::LogFields fields = {{"app", entry.name},
                                         {"schedule", schedule.name},
                                         {"scheduled_at", occurrence.scheduledAtText()}};
      if (!published.ok()) {
        // The planner keeps this schedule's watermark: the next good round catches up.
        metrics_.countRedisError("schedule_publish");
        fields.emplace_back("error", published.error().message);
        logger_.warn("publishing a schedule occurrence failed", fields);
        round.complete = false;
        return round;
      }
      planner_.markDone(key, *due);
      if (published->has_value()) {
        ++round.published;
        fields.emplace_back("message_id", **published);
        logger_.info("schedule occurrence published", fields);
      } else {
        ++round.duplicates;
        logger_.debug("schedule occurrence already published", fields);
      }
    }
  }
  planner_.endRound();
  return round;
}

void SchedulePublisher::stop() { stopping_.request(); }

void SchedulePublisher::sleepUntil(WallTime when) {
  for (WallTime now = clock_.now(); !stopping_.requested() && now < when; now = clock_.now()) {
    stopping_.sleepFor(clock_,
                       std::min<std::chrono::nanoseconds>(settings_.wall_check, when - now));
  }
}

void SchedulePublisher::run() {
  std::unique_ptr<redis::Connection> redis;
  redis::Backoff backoff(settings_.reconnect_min, settings_.reconnect_max);
  while (!stopping_.requested()) {
    if (auto connected = redis::reconnect(redis, endpoint_); !connected.ok()) {
      metrics_.countRedisError("connect");
      logger_.warn("schedule publisher: redis unreachable, retrying",
                   {{"redis", endpoint_.describe()},
                    {"error", connected.error().message},
                    {"retry_in", std::to_string(backoff.wait().count()) + "ms"}});
      sleepUntil(clock_.now() + backoff.next());
      continue;
    }
    const PublishRound round = publishDue(*redis);
    if (!round.complete) {
      sleepUntil(clock_.now() + backoff.next());
      continue;
    }
    backoff.reset();
    // Fire times are whole minutes: evaluate again at the top of the next one.
    sleepUntil(std::chrono::floor<std::chrono::minutes>(clock_.now()) + std::chrono::minutes(1));
  }
}

}  // namespace relay::catalog
