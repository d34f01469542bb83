#include "worker/housekeeper.h"

#include <algorithm>
#include <memory>

#include "common/duration.h"
#include "common/rfc3339.h"
#include "history/retention_record.h"
#include "redis/errors.h"
#include "stream/group_keeper.h"
#include "stream/pending_inspector.h"
#include "stream/retention.h"

namespace relay::worker {

Housekeeper::Housekeeper(HousekeepingSettings settings, redis::Endpoint endpoint,
                         invocation::StreamKeys keys, stream::Trimmer& trimmer,
                         stream::ThroughputRecorder& throughput, observability::Metrics& metrics,
                         observability::Logger& logger, Clock& clock, invocation::Catalog* catalog)
    : settings_(settings),
      keys_(std::move(keys)),
      trimmer_(trimmer),
      throughput_(throughput),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      catalog_(catalog),
      backlog_(keys_, settings_.backlog),
      idle_consumers_(keys_, settings_.consumer, settings_.idle_consumers),
      chore_("relay-housekeep", std::move(endpoint), clock) {}

Housekeeper::~Housekeeper() { stop(); }

void Housekeeper::start() {
  chore_.start(settings_.refresh_interval,
               {.round = [this](redis::Connection& redis) { round(redis); },
                .unreachable =
                    [this](const redis::Error& error) {
                      metrics_.countRedisError("connect");
                      setGroupState({true, false, "redis unreachable: " + error.message});
                    },
                .last = [this](redis::Connection& redis) { last(redis); }});
}

void Housekeeper::stop() { chore_.stop(); }

GroupState Housekeeper::groupState() const {
  std::lock_guard lock(mutex_);
  return group_;
}

StreamHealth Housekeeper::streamHealth() const {
  std::lock_guard lock(mutex_);
  return stream_;
}

void Housekeeper::setGroupState(GroupState state) {
  std::lock_guard lock(mutex_);
  group_ = std::move(state);
}

void Housekeeper::refreshOnce(redis::Connection& redis) {
  auto pending = redis.command({"XPENDING", keys_.stream, keys_.group});
  if (!pending.ok()) {
    if (redis::isReplyError(pending.error(), "NOGROUP")) {
      setGroupState({true, false,
                     "consumer group \"" + keys_.group + "\" of stream \"" + keys_.stream +
                         "\" does not exist"});
      return;
    }
    metrics_.countRedisError("xpending");
    setGroupState({true, false, "cannot check the consumer group: " + pending.error().message});
    return;
  }
  auto count = pending->at(0);
  if (count.ok() && count->integer().ok()) metrics_.setPending(*count->integer());
  setGroupState({true, true, {}});
  auto backlog = backlog_.read(redis);
  if (backlog.ok()) {
    metrics_.setReadyBacklog(backlog->ready());
  } else {
    metrics_.countRedisError("ready_backlog");
  }
}

int Housekeeper::deleteIdleConsumersOnce(redis::Connection& redis) {
  auto deleted = idle_consumers_.deleteIdle(redis);
  if (!deleted.ok()) {
    metrics_.countRedisError("delconsumer");
    logger_.warn("deleting idle consumers failed", {{"error", deleted.error().message}});
    return 0;
  }
  for (const std::string& name : *deleted) {
    logger_.info("deleted an idle consumer with nothing pending", {{"consumer", name}});
  }
  metrics_.countIdleConsumersDeleted(static_cast<long long>(deleted->size()));
  return static_cast<int>(deleted->size());
}

void Housekeeper::inspectOnce(redis::Connection& redis) {
  StreamHealth health;
  health.checked = true;
  health.retention = trimmer_.settings().stream;
  const auto fail = [&](const std::string& what, const redis::Error& error) {
    metrics_.countRedisError("pending_health");
    health.problem = what + ": " + error.message;
    std::lock_guard lock(mutex_);
    stream_ = health;
  };
  auto positions = stream::Trimmer::groupPositions(redis, keys_.stream);
  if (!positions.ok()) return fail("cannot read the group positions", positions.error());
  const stream::GroupPosition* ours = nullptr;
  for (const stream::GroupPosition& position : *positions) {
    if (position.name == keys_.group) ours = &position;
  }
  if (ours) {
    health.pending = ours->pending;
    if (auto recorded =
            stream::recordGroupPosition(redis, keys_, ours->last_delivered, ours->first_pending);
        !recorded.ok()) {
      metrics_.countRedisError("group_record");
    }
  }
  reportRecreation(redis);
  const stream::PendingInspector inspector(keys_, catalog_);
  if (ours && ours->first_pending) {
    auto oldest = inspector.oldest(redis);
    if (!oldest.ok()) return fail("cannot inspect the oldest pending message", oldest.error());
    health.oldest = std::move(oldest).value();
  }
  if (const auto held = stream::trimHeldBack(*positions, clock_.now(), health.retention)) {
    health.held_back_group = held->group;
    if (held->group == keys_.group && health.oldest &&
        health.oldest->entry.id == held->id.toString()) {
      health.held_back = health.oldest;
    } else {
      const stream::PendingInspector other({keys_.stream, held->group}, catalog_);
      auto found = other.find(redis, {held->id.toString()}, /*payloads=*/false);
      if (!found.ok()) return fail("cannot inspect the entry holding trimming back", found.error());
      health.held_back = std::move(found->front());
    }
    if (!health.held_back) health.held_back_group.clear();  // acknowledged meanwhile
  }
  const auto seconds = [](const std::optional<stream::PendingReport>& report) {
    return report ? static_cast<double>(report->age_ms) / 1000.0 : 0.0;
  };
  const auto kind = [](const std::optional<stream::PendingReport>& report) {
    return report ? std::string(stream::kindName(report->reason.kind)) : std::string();
  };
  metrics_.setOldestPending(seconds(health.oldest), health.oldest ? health.oldest->entry.id : "",
                            health.oldest ? health.oldest->entry.consumer : "",
                            kind(health.oldest));
  metrics_.setTrimHeldBack(seconds(health.held_back), health.held_back_group,
                           health.held_back ? health.held_back->entry.id : "",
                           kind(health.held_back));
  noteHoldback(health);
  std::lock_guard lock(mutex_);
  stream_ = std::move(health);
}

void Housekeeper::reportRecreation(redis::Connection& redis) {
  auto taken = stream::takeRecreation(redis, keys_);
  if (!taken.ok()) {
    metrics_.countRedisError("group_record");
    return;
  }
  if (!*taken) return;
  logger_.error(
      "the consumer group was missing (destroyed?) and was re-created at its recorded position, "
      "not at 0: entries from there on are delivered again, older history is not",
      {{"stream", keys_.stream},
       {"group", keys_.group},
       {"at", (*taken)->at},
       {"record", keys_.groupRecord()},
       {"recreated", formatRfc3339Millis(WallTime(std::chrono::milliseconds((*taken)->when_ms)))}});
}

void Housekeeper::noteHoldback(const StreamHealth& health) {
  const std::string id = health.held_back ? health.held_back->entry.id : "";
  if (id == held_back_id_) return;
  held_back_id_ = id;
  if (!health.held_back) {
    logger_.info("stream trimming is no longer held back by a pending message",
                 {{"stream", keys_.stream}});
    return;
  }
  const stream::PendingReport& report = *health.held_back;
  logger_.warn("stream trimming is held back by a pending message older than the retention",
               {{"stream", keys_.stream},
                {"group", health.held_back_group},
                {"message_id", report.entry.id},
                {"age", formatDuration(std::chrono::milliseconds(report.age_ms / 1000 * 1000))},
                {"consumer", report.entry.consumer},
                {"reason", std::string(stream::kindName(report.reason.kind))},
                {"why", stream::describe(report)}});
}

void Housekeeper::round(redis::Connection& redis) {
  refreshOnce(redis);
  inspectOnce(redis);
  throughput_.flush(redis);
  if (!settings_.consumer.empty()) {
    auto beat = redis.command({"SET", keys_.heartbeat(settings_.consumer), settings_.heartbeat,
                               "PX", std::to_string(settings_.heartbeat_ttl.count())});
    if (!beat.ok()) metrics_.countRedisError("heartbeat");
  }
  if (clock_.monotonicNow() >= next_trim_) {
    auto trimmed = trimmer_.trimOnce(redis);
    if (!trimmed.ok()) {
      logger_.warn("retention pass failed", {{"error", trimmed.error().message}});
    }
    // What a replay reports about entries it misses (docs/replay.md "Archive"): the retention
    // applied and how far it trimmed.
    auto recorded = history::recordRetention(redis, keys_, "stream", trimmer_.settings().stream);
    if (recorded.ok() && trimmed.ok() && trimmed->stream_trimmed > 0) {
      recorded = history::recordStreamTrim(redis, keys_, *trimmed->stream_min_id);
    }
    if (!recorded.ok()) metrics_.countRedisError("retention_record");
    if (!settings_.consumer.empty()) deleteIdleConsumersOnce(redis);
    next_trim_ = clock_.monotonicNow() + settings_.retention_interval;
  }
}

// What the last seconds before the stop counted (running invocations have finished by now).
void Housekeeper::last(redis::Connection& redis) {
  throughput_.flush(redis);
  if (!settings_.consumer.empty()) {
    (void)redis.command({"DEL", keys_.heartbeat(settings_.consumer)});
  }
}

}  // namespace relay::worker
