#include "stream/consumer.h"

#include <algorithm>

#include "invocation/keys.h"
#include "redis/errors.h"

namespace relay::stream {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kStopCheck{100};

}  // namespace

Consumer::Consumer(ConsumerSettings settings, redis::Endpoint endpoint, Dispatcher& dispatcher,
                   observability::Metrics& metrics, observability::Logger& logger, Clock& clock)
    : settings_(std::move(settings)),
      endpoint_(std::move(endpoint)),
      dispatcher_(dispatcher),
      metrics_(metrics),
      logger_(logger),
      clock_(clock) {}

Consumer::~Consumer() { stop(); }

redis::Result<void> Consumer::ensureGroup(redis::Connection& redis) {
  auto created =
      redis.command({"XGROUP", "CREATE", settings_.stream, settings_.group, "0", "MKSTREAM"});
  if (!created.ok() && !redis::isReplyError(created.error(), "BUSYGROUP")) {
    return created.error();
  }
  return {};
}

redis::Result<std::vector<StreamEntry>> Consumer::read(redis::Connection& redis, int count) {
  auto reply = redis.command(
      {"XREADGROUP", "GROUP", settings_.group, settings_.consumer, "COUNT", std::to_string(count),
       "BLOCK", std::to_string(settings_.block.count()), "STREAMS", settings_.stream, ">"});
  if (!reply.ok()) {
    metrics_.countRedisError("xreadgroup");
    redis_health_.failed(reply.error());
    // The group vanished (XGROUP DESTROY, FLUSHALL): create it again.
    if (redis::isReplyError(reply.error(), "NOGROUP")) (void)ensureGroup(redis);
    return reply.error();
  }
  redis_health_.healthy();
  return parseReadGroup(reply->view());
}

void Consumer::handle(redis::Connection& redis, const StreamEntry& entry) {
  const Delivery delivery = dispatcher_.process(redis, entry, stopping_);
  if (delivery == Delivery::kPending) {
    logger_.debug("message left pending", {{"message_id", entry.id}});
  }
}

redis::Result<int> Consumer::readOnce(redis::Connection& redis) {
  auto entries = read(redis, settings_.read_count);
  if (!entries.ok()) return entries.error();
  for (const StreamEntry& entry : *entries) handle(redis, entry);
  return static_cast<int>(entries->size());
}

void Consumer::clearMissing(redis::Connection& redis, const std::string& id) {
  // Data loss, not success: counted and cleared, never given a made-up payload or DLQ entry.
  metrics_.countMissingPayload();
  logger_.warn("pending message has no stream entry (trimmed or deleted externally): cleared",
               {{"message_id", id}});
  auto acked = redis.command({"XACK", settings_.stream, settings_.group, id});
  if (!acked.ok()) metrics_.countRedisError("xack");
  const invocation::StreamKeys keys{settings_.stream, settings_.group};
  auto exists = redis.command({"EXISTS", keys.state(id)});
  if (exists.ok() && exists->integer().ok() && *exists->integer() > 0) {
    const auto retention = dispatcher_.settings().invocation_retention;
    auto retain =
        redis.command({"HSET", keys.state(id), std::string(invocation::kRetainedField), "1"});
    if (retain.ok() && retention.count() > 0) {
      (void)redis.command({"PEXPIRE", keys.state(id), std::to_string(retention.count())});
    }
  }
}

redis::Result<int> Consumer::reclaimOnce(redis::Connection& redis) {
  std::string cursor = "0-0";
  int reclaimed = 0;
  do {
    auto reply = redis.command({"XAUTOCLAIM", settings_.stream, settings_.group, settings_.consumer,
                                std::to_string(settings_.min_pending_idle.count()), cursor, "COUNT",
                                std::to_string(settings_.read_count)});
    if (!reply.ok()) {
      metrics_.countRedisError("xautoclaim");
      return reply.error();
    }
    auto page = parseAutoClaim(reply->view());
    if (!page.ok()) return page.error();
    for (const std::string& id : page->deleted) clearMissing(redis, id);
    std::vector<StreamEntry> fresh;
    {
      std::lock_guard lock(mutex_);
      for (StreamEntry& entry : page->entries) {
        // Our own delivery still being processed idles in the PEL too: leave it alone.
        if (!unfinished_.count(entry.id)) fresh.push_back(std::move(entry));
      }
    }
    reclaimed += static_cast<int>(fresh.size() + page->deleted.size());
    metrics_.countReclaimed(static_cast<long long>(fresh.size()));
    for (const StreamEntry& entry : fresh) {
      if (stopping_) break;
      handle(redis, entry);
    }
    cursor = page->next;
  } while (cursor != "0-0" && !stopping_);
  auto pending = redis.command({"XPENDING", settings_.stream, settings_.group});
  if (pending.ok()) {
    auto count = pending->at(0);
    if (count.ok() && count->integer().ok()) metrics_.setPending(*count->integer());
  }
  return reclaimed;
}

void Consumer::stop() {
  stopping_ = true;
  changed_.notify_all();
}

void Consumer::sleepUnlessStopping(milliseconds duration) {
  const MonoTime until = clock_.monotonicNow() + duration;
  while (!stopping_ && clock_.monotonicNow() < until) {
    clock_.sleepFor(std::min(
        kStopCheck, std::chrono::duration_cast<milliseconds>(until - clock_.monotonicNow())));
  }
}

std::unique_ptr<redis::Connection> Consumer::connect(std::unique_ptr<redis::Connection> old,
                                                     milliseconds& backoff) {
  if (old && old->ok()) return old;
  while (!stopping_) {
    redis::ConnectionSettings connection;
    connection.command_timeout = settings_.block + std::chrono::seconds(5);
    auto created = redis::Connection::create(endpoint_, connection);
    if (created.ok()) {
      if (old) logger_.info("reconnected to redis", {{"redis", endpoint_.describe()}});
      backoff = settings_.reconnect_min;
      return std::move(created).value();
    }
    redis_health_.failed(created.error());
    metrics_.countRedisError("connect");
    logger_.warn("redis unreachable, retrying",
                 {{"redis", endpoint_.describe()},
                  {"error", created.error().message},
                  {"retry_in", std::to_string(backoff.count()) + "ms"}});
    sleepUnlessStopping(backoff);
    backoff = std::min(backoff * 2, settings_.reconnect_max);
  }
  return nullptr;
}

void Consumer::enqueue(std::vector<StreamEntry> entries) {
  std::lock_guard lock(mutex_);
  for (StreamEntry& entry : entries) {
    if (unfinished_.insert(entry.id).second) queue_.push_back(std::move(entry));
  }
  changed_.notify_all();
}

void Consumer::readerLoop() {
  std::unique_ptr<redis::Connection> redis;
  milliseconds backoff = settings_.reconnect_min;
  bool group_ready = false;
  while (!stopping_) {
    redis = connect(std::move(redis), backoff);
    if (!redis) return;
    if (!group_ready) {
      auto group = ensureGroup(*redis);
      if (!group.ok()) {
        logger_.error("cannot create the consumer group", {{"error", group.error().message}});
        sleepUnlessStopping(backoff);
        continue;
      }
      group_ready = true;
      redis_health_.healthy();  // Redis answered: /healthz need not wait for the first read
    }
    int room = 0;
    {
      // Backpressure: the backlog stays in Redis while max_unfinished messages are in hand.
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || static_cast<int>(unfinished_.size()) < settings_.max_unfinished;
      });
      room = settings_.max_unfinished - static_cast<int>(unfinished_.size());
    }
    if (stopping_) return;
    auto entries = read(*redis, std::min(room, settings_.read_count));
    if (!entries.ok()) {
      logger_.warn("reading the stream failed", {{"error", entries.error().message}});
      if (redis->ok()) sleepUnlessStopping(backoff);
      continue;
    }
    enqueue(std::move(entries).value());
  }
}

void Consumer::redriveSoon() { redrive_requested_ = true; }

redis::Result<int> Consumer::redriveOnce(redis::Connection& redis) {
  std::string start = "-";
  int redriven = 0;
  while (!stopping_) {
    auto reply = redis.command({"XPENDING", settings_.stream, settings_.group, start, "+",
                                std::to_string(settings_.read_count), settings_.consumer});
    if (!reply.ok()) {
      metrics_.countRedisError("xpending");
      return reply.error();
    }
    auto rows = reply->elements();
    if (!rows.ok()) return rows.error();
    for (const redis::ReplyView row : *rows) {
      auto id = row.at(0);
      auto idle = row.at(2);
      if (!id.ok() || !idle.ok() || !id->string().ok() || !idle->integer().ok()) {
        return redis::Error{redis::ErrorKind::kProtocol, "unexpected XPENDING row"};
      }
      const std::string message_id(*id->string());
      start = "(" + message_id;
      {
        std::lock_guard lock(mutex_);
        if (unfinished_.count(message_id)) continue;  // in hand here already
      }
      auto claimed = redis.command({"XCLAIM", settings_.stream, settings_.group, settings_.consumer,
                                    std::to_string(*idle->integer()), message_id});
      if (!claimed.ok()) {
        metrics_.countRedisError("xclaim");
        return claimed.error();
      }
      auto entries = parseEntries(claimed->view());
      if (!entries.ok()) return entries.error();
      for (const StreamEntry& entry : *entries) {
        if (stopping_) break;
        ++redriven;
        if (entry.deleted) {
          clearMissing(redis, entry.id);
        } else {
          handle(redis, entry);
        }
      }
    }
    if (rows->size() < static_cast<std::size_t>(settings_.read_count)) break;
  }
  return redriven;
}

void Consumer::reclaimLoop() {
  std::unique_ptr<redis::Connection> redis;
  milliseconds backoff = settings_.reconnect_min;
  MonoTime next_reclaim = clock_.monotonicNow() + settings_.reclaim_interval;
  while (!stopping_) {
    while (!stopping_ && !redrive_requested_ && clock_.monotonicNow() < next_reclaim) {
      clock_.sleepFor(std::min(kStopCheck, std::chrono::duration_cast<milliseconds>(
                                               next_reclaim - clock_.monotonicNow())));
    }
    if (stopping_) return;
    redis = connect(std::move(redis), backoff);
    if (!redis) return;
    if (redrive_requested_.exchange(false)) {
      auto redriven = redriveOnce(*redis);
      if (!redriven.ok()) {
        logger_.warn("redriving pending messages failed", {{"error", redriven.error().message}});
      } else if (*redriven > 0) {
        logger_.info("redrove own pending messages", {{"count", std::to_string(*redriven)}});
      }
      continue;
    }
    next_reclaim = clock_.monotonicNow() + settings_.reclaim_interval;
    auto reclaimed = reclaimOnce(*redis);
    if (!reclaimed.ok()) {
      logger_.warn("reclaim failed", {{"error", reclaimed.error().message}});
    } else if (*reclaimed > 0) {
      logger_.info("reclaimed idle pending messages", {{"count", std::to_string(*reclaimed)}});
    }
  }
}

void Consumer::workerLoop() {
  std::unique_ptr<redis::Connection> redis;
  milliseconds backoff = settings_.reconnect_min;
  while (true) {
    StreamEntry entry;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;  // queued messages stay pending in Redis
      entry = std::move(queue_.front());
      queue_.pop_front();
    }
    redis = connect(std::move(redis), backoff);
    if (redis) handle(*redis, entry);
    {
      std::lock_guard lock(mutex_);
      unfinished_.erase(entry.id);
    }
    changed_.notify_all();
    if (!redis) return;
  }
}

void Consumer::run() {
  std::vector<std::thread> threads;
  threads.emplace_back([this] { readerLoop(); });
  threads.emplace_back([this] { reclaimLoop(); });
  for (int i = 0; i < settings_.max_unfinished; ++i) {
    threads.emplace_back([this] { workerLoop(); });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace relay::stream
