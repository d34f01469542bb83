#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/stop_signal.h"
#include "invocation/lifecycle.h"
#include "invocation/lifecycle_store.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "redis/health.h"
#include "redis/reconnect.h"
#include "stream/due_retries.h"
#include "stream/group_reader.h"
#include "stream/idle_claims.h"
#include "stream/stream_entry.h"

namespace relay::stream {

/// Fixed internals of reading (docs/pipeline.md "Reading"): tests shorten them through this struct;
/// the binary sets only `workers` (MAX_CONCURRENCY).
struct ConsumerSettings {
  std::string stream = "events";
  std::string group = "relay";
  std::string consumer;
  std::chrono::milliseconds block{5'000};  // XREADGROUP BLOCK
  int read_count = 10;                     // XREADGROUP COUNT
  /// Under a backlog (the last read was full) the reader waits for this much room before it
  /// reads (at most read_count and the in-hand limit), for at most `gather`, so one XREADGROUP
  /// brings several messages instead of one per freed slot (docs/pipeline.md "Reading").
  int gather_room = 4;
  std::chrono::milliseconds gather{5};
  /// Messages in hand (read, reclaimed or due, and not finished): at most max(max_unfinished,
  /// workers); the backlog stays in Redis.
  int max_unfinished = 16;
  /// Threads that process messages (new, reclaimed and retried alike): MAX_CONCURRENCY.
  int workers = 16;
  std::chrono::milliseconds reclaim_interval{60'000};
  std::chrono::milliseconds min_pending_idle{60'000};  // XAUTOCLAIM min-idle-time
  std::chrono::milliseconds due_poll{1'000};           // how often the due-retry index is read
  DueRetries::Settings due;
  /// docs/pipeline.md "Poison messages": a message taken over from dead workers this many times
  /// before its plan was recorded is dead-lettered instead of delivered again (0: never).
  PoisonRule poison;
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5'000};
  /// What one read may bring into memory per entry (docs/operations.md "Memory"): every read
  /// of entries (XREADGROUP, XAUTOCLAIM, XCLAIM, due retries) is cut to it while it streams in.
  redis::ReplyLimits entry_limits = entryReplyLimits(256 * 1024);  // MAX_EVENT_BYTES's default
};

/// Makes one LifecycleStore for one thread (each has its own Redis connection).
using StoreFactory = std::function<std::unique_ptr<invocation::LifecycleStore>()>;

/// The transport of a worker: reads the stream through the consumer group, reclaims idle
/// pending messages (XAUTOCLAIM, the backstop), takes due retries from the due-retry index, and
/// hands every message to the Lifecycle on one pool of `workers` threads, so reclaimed and
/// retried messages share the pool and the limits of new ones. One per worker process.
class Consumer {
 public:
  Consumer(ConsumerSettings settings, redis::Endpoint endpoint, invocation::Lifecycle& lifecycle,
           StoreFactory stores, observability::Metrics& metrics, observability::Logger& logger,
           Clock& clock);
  ~Consumer();

  /// XGROUP CREATE ... MKSTREAM at 0; an existing group (BUSYGROUP) is fine.
  redis::Result<void> ensureGroup(redis::Connection& redis);

  /// Runs the reader, the reclaimer, the due-retry poller and the pool until stop(); then waits
  /// for the messages being processed (running handlers finish, nothing new starts) and
  /// returns. Unstarted messages stay pending. Blocks.
  void run();
  /// Asks run() to stop. Thread-safe, non-blocking.
  void stop();

  /// One XREADGROUP round processed synchronously on the caller's connection: for tests and
  /// tools. Returns the number of messages read.
  redis::Result<int> readOnce(redis::Connection& redis);
  /// One reclaim sweep processed synchronously. Returns the number of messages reclaimed
  /// (missing payloads included).
  redis::Result<int> reclaimOnce(redis::Connection& redis);
  /// One poll of the due-retry index processed synchronously. Returns the number taken.
  redis::Result<int> pollDueOnce(redis::Connection& redis);

  /// Asks the reclaimer to redrive this consumer's own pending messages now, instead of waiting
  /// for them to idle past min_pending_idle (an app was resumed: docs/cli.md "Pausing an app").
  /// Thread-safe, non-blocking.
  void redriveSoon();
  /// Asks the due poller to look at the due index by `at_ms` (Unix ms; 0: now) if it would
  /// look later: an outcome here woke a flow-control key's waiters, or flow control parked an
  /// invocation until a turn sooner than the poller's next look (docs/pipeline.md "Flow
  /// control"). Thread-safe, non-blocking.
  void wakeDue(std::int64_t at_ms = 0);
  /// Processes this consumer's own pending messages that it is not processing already:
  /// XPENDING for this consumer, then XCLAIM of each at the idle time XPENDING showed, so that
  /// a replica that reclaimed the message in between keeps it. Synchronous; returns how many.
  redis::Result<int> redriveOnce(redis::Connection& redis);

  /// Why Redis could not serve the reader's last call (unreachable, NOAUTH, READONLY, LOADING,
  /// MASTERDOWN, CLUSTERDOWN...); nullopt when it answered. For /healthz.
  std::optional<std::string> redisProblem() const { return redis_health_.problem(); }
  bool stopping() const { return stopping_.requested(); }
  /// Messages in hand: queued or being processed.
  int inHand() const;
  /// The room left in hand: the in-hand limit less the messages in hand and the room the
  /// reader, the due-retry poller or a sweep has reserved for what it brings (docs/pipeline.md
  /// "Reading"). A snapshot; thread-safe, never blocks.
  int room() const;
  /// Whether the reader has made sure the consumer group exists (systemd's READY=1).
  bool groupReady() const { return group_ready_.load(); }
  /// The reader's heartbeat for the watchdog (docs/deployment.md "systemd"): when its loop last
  /// turned (a read answered or failed, a reconnect attempt), and whether it waits for room now.
  MonoTime readerTurn() const { return MonoTime(MonoTime::duration(reader_turn_.load())); }
  bool readerWaitingForRoom() const { return reader_waiting_.load(); }

 private:
  /// Takes a page of entries a sweep brought and the room reserved for it (reserveRoom()).
  using Deliver = std::function<void(std::vector<StreamEntry>, int reserved)>;
  /// One reclaim sweep (docs/pipeline.md "Reading"): the messages every consumer but the
  /// parking one left idle beyond min_pending_idle, taken over a page at a time, each page no
  /// larger than the room its `room` callback reserves; `deliver` gets each page's entries not
  /// already in hand.
  redis::Result<int> sweep(redis::Connection& redis, invocation::LifecycleStore& store,
                           const Deliver& deliver, const std::function<int()>& room);
  /// XCLAIMs this consumer's own pending messages not in hand; `deliver` gets them.
  redis::Result<int> redrive(redis::Connection& redis, invocation::LifecycleStore& store,
                             const Deliver& deliver, const std::function<int()>& room);
  /// Counts, logs and clears a pending reference whose stream entry is gone.
  void clearMissing(invocation::LifecycleStore& store, const std::string& id);
  void process(invocation::LifecycleStore& store, const StreamEntry& entry,
               const invocation::Classification* classified = nullptr);
  /// A Deliver that processes the entries on the calling thread (the *Once calls).
  Deliver processNow(invocation::LifecycleStore& store);
  invocation::LifecycleStore& syncStore();
  void readerLoop();
  void reclaimLoop();
  void dueLoop();
  void workerLoop();
  /// Hands `messages` to the pool; `reserved` is the room the reader reserved for them, given
  /// back in the same step. The reader's come classified (Lifecycle::settleRead).
  void enqueue(std::vector<invocation::ClassifiedMessage> messages, int reserved = 0);
  /// The reclaimer's and the due-retry poller's: the pool classifies them.
  void enqueue(std::vector<StreamEntry> entries, int reserved);
  /// Room for more messages in hand; waits while there is none (until stop), then, when
  /// `wanted` is more than the room, up to `patience` more for `wanted` (a bounded real-time
  /// wait on the condition, as in ConcurrencyLimiter).
  int waitForRoom(int wanted = 1, std::chrono::milliseconds patience = {});
  /// The reader's reservations: room that counts in hand (for every source's waitForRoom)
  /// until enqueue() or release() gives it back, so no other source takes the room of the
  /// messages a read brought, or of a read sent ahead, while the reader settles them.
  /// hold() reserves `messages` (read already); reserveNow() reserves
  /// min(room, `limit`) if the room is at least `wanted`, else nothing (0).
  void hold(int messages);
  /// Free room in hand (mutex_ held).
  int roomLocked() const;
  int reserveNow(int limit, int wanted);
  /// Waits (until stop) for room, then reserves min(room, `limit`): a sweep's or the due
  /// poller's next batch, given back by enqueue() or release(). 0 once stopping.
  int reserveRoom(int limit);
  void release(int reserved);
  std::unique_ptr<redis::Connection> connect(std::unique_ptr<redis::Connection> old,
                                             redis::Backoff& backoff,
                                             const std::function<void()>& attempted = {});

  ConsumerSettings settings_;
  redis::Endpoint endpoint_;
  invocation::Lifecycle& lifecycle_;
  StoreFactory stores_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  DueRetries due_;
  const int capacity_;   // max(max_unfinished, workers)
  StopSignal stopping_;  // also the reclaimer's wait, which redriveSoon() ends
  std::atomic<bool> redrive_requested_{false};
  std::atomic<bool> due_wake_{false};
  std::atomic<MonoTime::rep> next_due_poll_{0};  // the due poller's next look (steady ticks)
  /// Moves the due poller's next look to `at` if that is sooner; whether it did.
  bool lowerNextDuePoll(MonoTime::rep at);
  redis::Health redis_health_;
  GroupReader reader_;  // the reader thread's, and the *Once calls'
  std::unique_ptr<invocation::LifecycleStore> sync_store_;  // the *Once calls

  mutable std::mutex mutex_;
  // Two conditions, so a queued message wakes one pool thread and a finished one wakes only
  // the loops waiting for room (one shared condition woke all 16 pool threads per message).
  std::condition_variable queued_;    // the pool: queue_ is not empty (or stopping)
  std::condition_variable has_room_;  // reader, sweeps, due retries: unfinished_ shrank
  std::deque<invocation::ClassifiedMessage> queue_;
  std::set<std::string> unfinished_;  // queued or being processed here
  int reserved_ = 0;                  // room of the reader's reads in flight or being settled
  // The reader's connection while it waits in XREADGROUP BLOCK: stop() interrupts it, so an
  // idle worker stops at once rather than when the BLOCK ends.
  redis::Connection* blocking_read_ = nullptr;
  std::atomic<bool> group_ready_{false};
  std::atomic<MonoTime::rep> reader_turn_{0};  // steady_clock ticks since its epoch
  std::atomic<bool> reader_waiting_{false};
};

}  // namespace relay::stream
