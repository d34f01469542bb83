#include "stream/consumer.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/thread_name.h"
#include "invocation/keys.h"
#include "redis/errors.h"
#include "stream/idle_claims.h"

namespace relay::stream {
namespace {

using std::chrono::milliseconds;

// The due poller's shortest sleep: below the flow-control resolution (docs/apps.md).
constexpr milliseconds kDueFloor{2};

}  // namespace

Consumer::Consumer(ConsumerSettings settings, redis::Endpoint endpoint,
                   invocation::Lifecycle& lifecycle, StoreFactory stores,
                   observability::Metrics& metrics, observability::Logger& logger, Clock& clock)
    : settings_(std::move(settings)),
      endpoint_(std::move(endpoint)),
      lifecycle_(lifecycle),
      stores_(std::move(stores)),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      due_(invocation::StreamKeys{settings_.stream, settings_.group}, settings_.consumer,
           settings_.due, settings_.entry_limits),
      capacity_(std::max({1, settings_.max_unfinished, settings_.workers})),
      reader_({settings_.stream, settings_.group, settings_.consumer, settings_.block,
               settings_.entry_limits},
              metrics_, redis_health_) {}

Consumer::~Consumer() { stop(); }

redis::Result<void> Consumer::ensureGroup(redis::Connection& redis) {
  return reader_.ensureGroup(redis);
}

void Consumer::process(invocation::LifecycleStore& store, const StreamEntry& entry,
                       const invocation::Classification* classified) {
  const invocation::Delivery delivery =
      lifecycle_.process(store, entry, stopping_.flag(), classified);
  if (delivery == invocation::Delivery::kPending) {
    logger_.debug("message left pending", {{"message_id", entry.id}});
  }
}

void Consumer::clearMissing(invocation::LifecycleStore& store, const std::string& id) {
  // Data loss, not success: counted and cleared, never given a made-up payload or DLQ entry.
  metrics_.countMissingPayload();
  logger_.warn("pending message has no stream entry (trimmed or deleted externally): cleared",
               {{"message_id", id}});
  if (auto cleared = store.clearMissing(id); !cleared.ok()) metrics_.countRedisError("xack");
}

invocation::LifecycleStore& Consumer::syncStore() {
  if (!sync_store_) sync_store_ = stores_();
  return *sync_store_;
}

redis::Result<int> Consumer::readOnce(redis::Connection& redis) {
  auto entries = reader_.read(redis, settings_.read_count);
  if (!entries.ok()) return entries.error();
  const int count = static_cast<int>(entries->size());
  for (const invocation::ClassifiedMessage& message :
       lifecycle_.settleRead(syncStore(), std::move(entries).value())) {
    process(syncStore(), message.message,
            message.classification ? &*message.classification : nullptr);
  }
  return count;
}

redis::Result<int> Consumer::sweep(redis::Connection& redis, invocation::LifecycleStore& store,
                                   const Deliver& deliver, const std::function<int()>& room) {
  // Every consumer of the group but the parking one, whose messages wait on an index and are
  // taken back by the pollers (docs/pipeline.md "Waiting"): a parked backlog costs no sweep.
  auto consumers = groupConsumers(redis, settings_.stream, settings_.group);
  if (!consumers.ok()) {
    metrics_.countRedisError("xinfo");
    return consumers.error();
  }
  int reclaimed = 0;
  const invocation::StreamKeys keys{settings_.stream, settings_.group};
  for (const GroupConsumer& owner : *consumers) {
    if (owner.pending == 0 || owner.name == invocation::kParkingConsumer) continue;
    // A worker keeps its heartbeat key alive (docs/operations.md "Threads"); without one its
    // messages are taken over from a dead worker: docs/pipeline.md "Poison messages".
    bool owner_dead = false;
    if (settings_.poison.deaths > 0 && owner.name != settings_.consumer) {
      auto alive = redis.command({"EXISTS", keys.heartbeat(owner.name)});
      owner_dead = alive.ok() && alive->integer().ok() && *alive->integer() == 0;
    }
    std::string start = "-";
    while (!stopping_.requested()) {
      // The room this page may take is reserved until deliver() fills it (or gives it back).
      const int count = room();
      if (count <= 0) break;
      auto reply = redis.command({"XPENDING", settings_.stream, settings_.group, "IDLE",
                                  std::to_string(settings_.min_pending_idle.count()), start, "+",
                                  std::to_string(count), owner.name});
      if (!reply.ok()) {
        deliver({}, count);
        metrics_.countRedisError("xpending");
        return reply.error();
      }
      auto rows = reply->elements();
      if (!rows.ok()) {
        deliver({}, count);
        return rows.error();
      }
      std::vector<IdleMessage> idle;
      for (const redis::ReplyView row : *rows) {
        auto id = row.at(0);
        if (!id.ok() || !id->string().ok()) {
          deliver({}, count);
          return redis::Error{redis::ErrorKind::kProtocol, "unexpected XPENDING row"};
        }
        const std::string message_id(*id->string());
        start = "(" + message_id;
        std::lock_guard lock(mutex_);
        // Our own delivery still being processed idles in the PEL too: leave it alone.
        if (!unfinished_.count(message_id)) idle.push_back({message_id, owner_dead});
      }
      std::vector<StreamEntry> taken;
      if (!idle.empty()) {
        auto page = claimIdle(redis, keys, settings_.consumer, settings_.min_pending_idle, idle,
                              settings_.poison, &settings_.entry_limits);
        if (!page.ok()) {
          deliver({}, count);
          metrics_.countRedisError("xclaim");
          return page.error();
        }
        for (const std::string& id : page->deleted) clearMissing(store, id);
        for (const PoisonMessage& poison : page->poison) {
          (void)lifecycle_.deadLetterPoison(store, poison.id, poison.deaths, poison.event_bytes,
                                            poison.event_head);
        }
        reclaimed += static_cast<int>(page->entries.size() + page->deleted.size());
        metrics_.countReclaimed(static_cast<long long>(page->entries.size()));
        taken = std::move(page->entries);
      }
      deliver(std::move(taken), count);
      if (rows->size() < static_cast<std::size_t>(count)) break;
    }
  }
  auto pending = redis.command({"XPENDING", settings_.stream, settings_.group});
  if (pending.ok()) {
    auto count = pending->at(0);
    if (count.ok() && count->integer().ok()) metrics_.setPending(*count->integer());
  }
  return reclaimed;
}

Consumer::Deliver Consumer::processNow(invocation::LifecycleStore& store) {
  return [this, &store](std::vector<StreamEntry> entries, int /*reserved*/) {
    for (const StreamEntry& entry : entries) {
      if (stopping_.requested()) break;
      process(store, entry);
    }
  };
}

redis::Result<int> Consumer::reclaimOnce(redis::Connection& redis) {
  invocation::LifecycleStore& store = syncStore();
  return sweep(redis, store, processNow(store), [this] { return settings_.read_count; });
}

redis::Result<int> Consumer::pollDueOnce(redis::Connection& redis) {
  auto due = due_.take(redis, settings_.read_count);
  if (!due.ok()) return due.error();
  for (const std::string& id : due->page.deleted) clearMissing(syncStore(), id);
  for (const StreamEntry& entry : due->page.entries) process(syncStore(), entry);
  return static_cast<int>(due->page.entries.size());
}

void Consumer::stop() {
  stopping_.request();
  {
    // A waiter between its check and its wait sees it; a blocking read ends now.
    const std::lock_guard lock(mutex_);
    if (blocking_read_) blocking_read_->interrupt();
  }
  queued_.notify_all();
  has_room_.notify_all();
}

int Consumer::inHand() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(unfinished_.size());
}

int Consumer::room() const {
  std::lock_guard lock(mutex_);
  return roomLocked();
}

std::unique_ptr<redis::Connection> Consumer::connect(std::unique_ptr<redis::Connection> old,
                                                     redis::Backoff& backoff,
                                                     const std::function<void()>& attempted) {
  if (old && old->ok()) return old;
  const bool lost = old != nullptr;
  redis::ConnectionSettings connection;
  connection.command_timeout = settings_.block + std::chrono::seconds(5);
  while (!stopping_.requested()) {
    if (attempted) attempted();
    auto connected = redis::reconnect(old, endpoint_, connection);
    if (connected.ok()) {
      if (lost) logger_.info("reconnected to redis", {{"redis", endpoint_.describe()}});
      backoff.reset();
      return old;
    }
    redis_health_.failed(connected.error());
    metrics_.countRedisError("connect");
    logger_.warn("redis unreachable, retrying",
                 {{"redis", endpoint_.describe()},
                  {"error", connected.error().message},
                  {"retry_in", std::to_string(backoff.wait().count()) + "ms"}});
    stopping_.sleepFor(clock_, backoff.next());
  }
  return nullptr;
}

void Consumer::enqueue(std::vector<StreamEntry> entries, int reserved) {
  std::vector<invocation::ClassifiedMessage> messages;
  messages.reserve(entries.size());
  for (StreamEntry& entry : entries) messages.push_back({std::move(entry), std::nullopt});
  enqueue(std::move(messages), reserved);
}

void Consumer::enqueue(std::vector<invocation::ClassifiedMessage> messages, int reserved) {
  std::size_t added = 0;
  {
    // The messages take the reservation's place in one step: no other source sees the room
    // in between.
    std::lock_guard lock(mutex_);
    reserved_ -= std::max(reserved, 0);
    for (invocation::ClassifiedMessage& message : messages) {
      if (!unfinished_.insert(message.message.id).second) continue;
      queue_.push_back(std::move(message));
      ++added;
    }
  }
  // What the read settled itself (or found in hand already) left room behind.
  if (reserved > static_cast<int>(added)) has_room_.notify_all();
  // One pool thread per message: the others sleep on (none for a read settled whole).
  for (std::size_t i = 0; i < added; ++i) queued_.notify_one();
}

int Consumer::roomLocked() const {
  return capacity_ - static_cast<int>(unfinished_.size()) - reserved_;
}

int Consumer::waitForRoom(int wanted, milliseconds patience) {
  std::unique_lock lock(mutex_);
  const auto room = [this] { return roomLocked(); };
  has_room_.wait(lock, [&] { return stopping_.requested() || room() > 0; });
  if (!stopping_.requested() && room() < wanted && patience.count() > 0) {
    has_room_.wait_for(lock, patience, [&] { return stopping_.requested() || room() >= wanted; });
  }
  return stopping_.requested() ? 0 : room();
}

void Consumer::hold(int messages) {
  std::lock_guard lock(mutex_);
  reserved_ += messages;
}

int Consumer::reserveRoom(int limit) {
  std::unique_lock lock(mutex_);
  has_room_.wait(lock, [&] { return stopping_.requested() || roomLocked() > 0; });
  if (stopping_.requested()) return 0;
  const int reserved = std::min(roomLocked(), limit);
  reserved_ += reserved;
  return reserved;
}

int Consumer::reserveNow(int limit, int wanted) {
  std::lock_guard lock(mutex_);
  const int room = roomLocked();
  if (room < wanted) return 0;
  const int reserved = std::min(room, limit);
  reserved_ += reserved;
  return reserved;
}

void Consumer::release(int reserved) {
  if (reserved <= 0) return;
  {
    std::lock_guard lock(mutex_);
    reserved_ -= reserved;
  }
  has_room_.notify_all();
}

void Consumer::readerLoop() {
  std::unique_ptr<redis::Connection> redis;
  std::unique_ptr<invocation::LifecycleStore> store = stores_();
  redis::Backoff backoff(settings_.reconnect_min, settings_.reconnect_max);
  bool backlog = false;  // the last read was full: more is waiting in the stream
  int ahead = 0;         // COUNT of the read sent ahead on `redis`, 0: none
  const int gather_room =
      std::clamp(settings_.gather_room, 1, std::max(1, std::min(settings_.read_count, capacity_)));
  const auto beat = [this] {
    reader_turn_.store(clock_.monotonicNow().time_since_epoch().count());
  };
  while (!stopping_.requested()) {
    beat();
    if (redis && !redis->ok()) release(std::exchange(ahead, 0));  // lost with its connection
    redis = connect(std::move(redis), backoff, beat);
    if (!redis) return;
    if (!group_ready_) {
      auto group = ensureGroup(*redis);
      if (!group.ok()) {
        logger_.error("cannot create the consumer group", {{"error", group.error().message}});
        stopping_.sleepFor(clock_, backoff.wait());
        continue;
      }
      group_ready_ = true;
      redis_health_.healthy();  // Redis answered: /healthz need not wait for the first read
    }
    // A read sent ahead holds its room from the moment it was sent (it answers at once); a
    // blocking read reserves what it brought as soon as it has it, so it never keeps the due
    // retries and the reclaimer from the room while it waits for new messages. Either way the
    // reservation lasts until the messages are queued or settled (enqueue).
    int count = std::exchange(ahead, 0);
    int reserved = count;
    auto entries = [&]() -> redis::Result<std::vector<StreamEntry>> {
      if (count > 0) return reader_.take(*redis, count);
      // Backpressure: the backlog stays in Redis while the hands are full. Under a backlog,
      // wait a moment for a few slots, not one (docs/pipeline.md "Reading").
      reader_waiting_ = true;  // its handlers run: the watchdog counts it alive meanwhile
      const int room = backlog ? waitForRoom(gather_room, settings_.gather) : waitForRoom();
      reader_waiting_ = false;
      beat();
      count = std::min(room, settings_.read_count);
      {
        const std::lock_guard lock(mutex_);
        if (stopping_.requested()) return std::vector<StreamEntry>{};
        blocking_read_ = redis.get();
      }
      auto read = reader_.read(*redis, count);
      const std::lock_guard lock(mutex_);
      blocking_read_ = nullptr;
      return read;
    }();
    if (stopping_.requested()) return;
    if (!entries.ok()) {
      release(reserved);
      logger_.warn("reading the stream failed", {{"error", entries.error().message}});
      backlog = false;
      if (redis->ok()) stopping_.sleepFor(clock_, backoff.wait());
      continue;
    }
    // From here the reservation is exactly what the read brought.
    const int brought = static_cast<int>(entries->size());
    if (reserved == 0) {
      hold(brought);
    } else {
      release(reserved - brought);
    }
    reserved = brought;
    backlog = static_cast<int>(entries->size()) == count;
    if (backlog) {
      // Redis serves the next read while this one's acknowledgements make their round trip,
      // when there is room for it beside this read's messages.
      ahead = reserveNow(settings_.read_count, gather_room);
      if (ahead > 0 && !reader_.request(*redis, ahead).ok()) release(std::exchange(ahead, 0));
    }
    // What owes nothing is settled here, the whole read in one round trip; the rest goes to
    // the pool (docs/pipeline.md "Acknowledgements in batches").
    enqueue(lifecycle_.settleRead(*store, std::move(entries).value()), reserved);
  }
}

void Consumer::redriveSoon() {
  redrive_requested_ = true;
  stopping_.nudge();  // the reclaimer's wait ends now
}

redis::Result<int> Consumer::redriveOnce(redis::Connection& redis) {
  invocation::LifecycleStore& store = syncStore();
  return redrive(redis, store, processNow(store), [this] { return settings_.read_count; });
}

redis::Result<int> Consumer::redrive(redis::Connection& redis, invocation::LifecycleStore& store,
                                     const Deliver& deliver, const std::function<int()>& room) {
  std::string start = "-";
  int redriven = 0;
  while (!stopping_.requested()) {
    const int count = room();
    if (count <= 0) break;
    auto reply = redis.command({"XPENDING", settings_.stream, settings_.group, start, "+",
                                std::to_string(count), settings_.consumer});
    if (!reply.ok()) {
      deliver({}, count);
      metrics_.countRedisError("xpending");
      return reply.error();
    }
    auto rows = reply->elements();
    if (!rows.ok()) {
      deliver({}, count);
      return rows.error();
    }
    std::vector<std::string> ids;
    for (const redis::ReplyView row : *rows) {
      auto id = row.at(0);
      if (!id.ok() || !id->string().ok()) {
        deliver({}, count);
        return redis::Error{redis::ErrorKind::kProtocol, "unexpected XPENDING row"};
      }
      const std::string message_id(*id->string());
      start = "(" + message_id;
      std::lock_guard lock(mutex_);
      if (!unfinished_.count(message_id)) ids.push_back(message_id);  // in hand here already
    }
    std::vector<StreamEntry> taken;
    if (!ids.empty()) {
      // At no idle time: they are this consumer's own, left pending here.
      std::vector<IdleMessage> own;
      for (std::string& id : ids) own.push_back({std::move(id), false});
      auto page = claimIdle(redis, {settings_.stream, settings_.group}, settings_.consumer,
                            milliseconds(0), own, {0, 0}, &settings_.entry_limits);
      if (!page.ok()) {
        deliver({}, count);
        metrics_.countRedisError("xclaim");
        return page.error();
      }
      for (const std::string& id : page->deleted) clearMissing(store, id);
      redriven += static_cast<int>(page->entries.size() + page->deleted.size());
      taken = std::move(page->entries);
    }
    deliver(std::move(taken), count);
    if (rows->size() < static_cast<std::size_t>(count)) break;
  }
  return redriven;
}

void Consumer::reclaimLoop() {
  std::unique_ptr<redis::Connection> redis;
  std::unique_ptr<invocation::LifecycleStore> store = stores_();
  redis::Backoff backoff(settings_.reconnect_min, settings_.reconnect_max);
  MonoTime next_reclaim = clock_.monotonicNow() + settings_.reclaim_interval;
  while (!stopping_.requested()) {
    stopping_.sleepUntil(clock_, next_reclaim, &redrive_requested_);
    if (stopping_.requested()) return;
    redis = connect(std::move(redis), backoff);
    if (!redis) return;
    // Sweeps only hand messages to the pool, never more than it has room for (the in-hand
    // limit holds for every source): a long handler never stalls them.
    const Deliver to_pool = [&](std::vector<StreamEntry> entries, int reserved) {
      enqueue(std::move(entries), reserved);
    };
    const auto room = [&] { return reserveRoom(settings_.read_count); };
    if (redrive_requested_.exchange(false)) {
      auto redriven = redrive(*redis, *store, to_pool, room);
      if (!redriven.ok()) {
        logger_.warn("redriving pending messages failed", {{"error", redriven.error().message}});
      } else if (*redriven > 0) {
        logger_.info("redrove own pending messages", {{"count", std::to_string(*redriven)}});
      }
      continue;
    }
    next_reclaim = clock_.monotonicNow() + settings_.reclaim_interval;
    auto reclaimed = sweep(*redis, *store, to_pool, room);
    if (!reclaimed.ok()) {
      logger_.warn("reclaim failed", {{"error", reclaimed.error().message}});
    } else if (*reclaimed > 0) {
      logger_.info("reclaimed idle pending messages", {{"count", std::to_string(*reclaimed)}});
    }
  }
}

void Consumer::dueLoop() {
  std::unique_ptr<redis::Connection> redis;
  std::unique_ptr<invocation::LifecycleStore> due_store;  // only for missing payloads
  redis::Backoff backoff(settings_.reconnect_min, settings_.reconnect_max);
  while (!stopping_.requested()) {
    redis = connect(std::move(redis), backoff);
    if (!redis) return;
    // From here a wakeDue() lowers the next look: one during the take (a park its script did
    // not see) is kept, not overwritten by the wait the take computes.
    next_due_poll_ = std::numeric_limits<MonoTime::rep>::max();
    const int room = reserveRoom(settings_.read_count);
    if (stopping_.requested() || room <= 0) {
      release(room);
      return;
    }
    auto due = due_.take(*redis, room);
    if (!due.ok()) {
      release(room);
      metrics_.countRedisError("due_retries");
      logger_.warn("reading due retries failed", {{"error", due.error().message}});
      stopping_.sleepFor(clock_, settings_.due_poll);
      continue;
    }
    if (!due->page.deleted.empty()) {
      if (!due_store) due_store = stores_();
      for (const std::string& id : due->page.deleted) clearMissing(*due_store, id);
    }
    // A full batch means more may be due: take them as soon as there is room (the pool stays
    // busy through a backlog of retries); otherwise look again after the poll interval.
    const bool more = static_cast<int>(due->page.entries.size() + due->page.deleted.size()) == room;
    if (!due->page.entries.empty()) {
      logger_.debug("due messages taken", {{"count", std::to_string(due->page.entries.size())}});
    }
    enqueue(std::move(due->page.entries), room);
    if (more) continue;
    // Until the next id is due (a throttle's turn, a woken key's waiter), at most a poll
    // interval and at least kDueFloor, or until an outcome here woke waiters (wakeDue()).
    std::chrono::milliseconds wait = settings_.due_poll;
    if (due->next_in) wait = std::min(std::max(*due->next_in, kDueFloor), settings_.due_poll);
    lowerNextDuePoll((clock_.monotonicNow() + wait).time_since_epoch().count());
    while (!stopping_.requested()) {
      const MonoTime next{MonoTime::duration(next_due_poll_.load())};
      if (clock_.monotonicNow() >= next) break;
      stopping_.sleepUntil(clock_, next, &due_wake_);
      due_wake_ = false;  // wakeDue() moved the next look: read it again
    }
  }
}

void Consumer::wakeDue(std::int64_t at_ms) {
  std::chrono::milliseconds in{0};
  if (at_ms > 0) {
    const auto now_ms = std::chrono::duration_cast<milliseconds>(clock_.now().time_since_epoch());
    in = std::max(milliseconds(at_ms) - now_ms, milliseconds(0));
  }
  if (lowerNextDuePoll((clock_.monotonicNow() + in).time_since_epoch().count())) {
    due_wake_ = true;
    stopping_.nudge();
  }
}

bool Consumer::lowerNextDuePoll(MonoTime::rep at) {
  MonoTime::rep planned = next_due_poll_.load();
  while (at < planned) {
    if (next_due_poll_.compare_exchange_weak(planned, at)) return true;
  }
  return false;
}

void Consumer::workerLoop() {
  std::unique_ptr<invocation::LifecycleStore> store = stores_();
  while (true) {
    invocation::ClassifiedMessage next;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_.requested() || !queue_.empty(); });
      if (stopping_.requested()) return;  // queued messages stay pending in Redis
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    process(*store, next.message, next.classification ? &*next.classification : nullptr);
    {
      std::lock_guard lock(mutex_);
      unfinished_.erase(next.message.id);
    }
    has_room_.notify_all();
  }
}

void Consumer::run() {
  std::vector<std::thread> threads;
  threads.push_back(namedThread("relay-reader", [this] { readerLoop(); }));
  threads.push_back(namedThread("relay-reclaimer", [this] { reclaimLoop(); }));
  threads.push_back(namedThread("relay-retries", [this] { dueLoop(); }));
  for (int i = 0; i < std::max(1, settings_.workers); ++i) {
    threads.push_back(namedThread("relay-pool", [this] { workerLoop(); }));
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace relay::stream
