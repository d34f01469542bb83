#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "invocation/backoff.h"
#include "invocation/catalog.h"
#include "invocation/claim_renewer.h"
#include "invocation/concurrency_limiter.h"
#include "invocation/keys.h"
#include "invocation/lifecycle_observer.h"
#include "invocation/lifecycle_store.h"
#include "invocation/message.h"
#include "invocation/output_tail.h"
#include "invocation/running_attempts.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "runtime/runtime.h"

namespace relay::invocation {

/// Fixed internals and configuration of the lifecycle. Tests shorten the waits and the backoff
/// through this struct; the `relay` binary only sets what docs/operations.md "Configuration" lists.
struct LifecycleSettings {
  StreamKeys keys;
  std::string consumer;
  ClaimTimes claim;
  /// How long a delivery waits for a per-app concurrency slot before the message is left
  /// pending (nothing claimed, nothing charged): slots are taken before the claim.
  std::chrono::milliseconds slot_wait = std::chrono::seconds(10);
  /// When an invocation this worker cannot run (its app unknown here, or unavailable) is looked
  /// at again, by whichever worker's due-retry poller takes it first.
  std::chrono::milliseconds retry_elsewhere = std::chrono::seconds(60);
  /// A released claim (no slot, runtime could not start, stopping) is due again after this.
  std::chrono::milliseconds release_retry = std::chrono::seconds(10);
  BackoffTable backoff;
  std::size_t output_tail = OutputTail::kDefaultLimit;
  /// docs/runtimes.md "Retry-after": a handler that exits 75 runs again after the delay it
  /// printed (`retry-after: 30s`), at most `retry_after_max` later, after `retry_after_default`
  /// when it printed none; uncharged up to `max_deferrals` times per invocation, then a failure.
  std::chrono::milliseconds retry_after_default = std::chrono::minutes(1);
  std::chrono::milliseconds retry_after_max = std::chrono::hours(1);
  int max_deferrals = 10;
};

/// A delivered message and, when the reader classified it already (Lifecycle::settleRead), that
/// classification: a message is decoded and matched once per delivery, on the reader's thread.
struct ClassifiedMessage {
  Message message;
  std::optional<Classification> classification;
};

/// What became of one delivery.
enum class Delivery {
  kAcked,    // every invocation terminal (or unmatched, malformed, obsolete): acknowledged
  kPending,  // something unresolved: left in the PEL for a later retry or reclaim
  kStale,    // another delivery already finished the message
};

/// The invocation lifecycle of one delivered message (docs/pipeline.md "One message"): classify
/// once (the plan recorded at the first execution wins over any later classification), run the
/// owed invocations one at a time in plan order, record every outcome, dead-letter the exhausted
/// ones and acknowledge once every one is terminal. Talks to persistence only through a
/// LifecycleStore, so the same rules run against Redis and the in-memory store of the unit tests.
/// Thread-safe: many messages are processed at once, each call with its own store.
class Lifecycle {
 public:
  Lifecycle(LifecycleSettings settings, Catalog& catalog, runtime::Runtime& runtime,
            ConcurrencyLimiter& limiter, ClaimRenewer* renewer, LifecycleObserver& observer,
            observability::Metrics& metrics, observability::Logger& logger, Clock& clock,
            Random& random, RunningAttempts* running = nullptr);

  /// Processes one delivery; blocks while its handlers run one after another. Once `stopping`
  /// is set no further handler starts and claims not yet started are released. `classified`,
  /// when given, is what settleRead() made of the message (it is not classified again).
  Delivery process(LifecycleStore& store, const Message& message, const std::atomic<bool>& stopping,
                   const Classification* classified = nullptr);

  /// The messages of one read (docs/pipeline.md "Acknowledgements in batches"): classifies each
  /// and settles those that owe nothing by their classification (unmatched and obsolete ones
  /// acknowledged, unrunnable ones dead-lettered and acknowledged) in one LifecycleStore::settle()
  /// call, one round trip. Returns the others, for process(): those that owe invocations or
  /// cannot be classified now, and those the store says owe a recorded plan (never
  /// acknowledged here: "ACK only when terminal" holds in the scripts), each with what it was
  /// classified as (the recorded plan for the latter), so that process() does not classify it
  /// again. Blocks on the store.
  std::vector<ClassifiedMessage> settleRead(LifecycleStore& store, std::vector<Message> messages);

  /// A message its workers kept dying while holding, before any plan was recorded
  /// (docs/pipeline.md "Poison messages"): one DLQ entry of kind `poison` with the first bytes
  /// of its event and its size, and its XACK, in one script; nothing runs. A message with a
  /// recorded plan is left alone (it owes that plan). Blocks on the store.
  Delivery deadLetterPoison(LifecycleStore& store, const std::string& id, long long deaths,
                            long long event_bytes, std::string event_head);

  const LifecycleSettings& settings() const { return settings_; }

  /// Called with a time (Unix ms of Redis's clock, 0: now) at which parked work is due that the
  /// transport's due poller may not expect: an outcome woke waiters of a key (due now), or a
  /// message was parked until a time (a throttle's turn: docs/pipeline.md "Flow control"). Set
  /// before any process().
  void setWakeHook(std::function<void(std::int64_t)> hook) { wake_ = std::move(hook); }

 private:
  enum class Step { kContinue, kStop, kAcked, kStale };
  Delivery runPlan(LifecycleStore& store, const Message& message, Plan plan,
                   const std::atomic<bool>& stopping, const ReplayOrigin* replay);
  Step runAttempt(LifecycleStore& store, const Message& message, const PlannedInvocation& planned,
                  const Runnable& runnable, int attempt, const std::string& token,
                  std::int64_t claimed_ms, const std::atomic<bool>& stopping,
                  const ReplayOrigin* replay);
  Delivery writeOwed(LifecycleStore& store, const Message& message, const Plan& plan,
                     const StartVerdict& verdict, const ReplayOrigin* replay);
  /// Counts and logs what flow control decided (deferred, deduplicated, superseded).
  void noteFlow(const Message& message, const Plan& plan, const std::vector<FlowNote>& notes);
  /// Logs (and counts) why a parked message waits.
  void logParked(const Message& message, const Plan& plan, const std::vector<Runnable>& runnables,
                 const std::vector<Runnability>& runnable, const StartVerdict& verdict);
  /// An unmatched, obsolete or unrunnable message, alone (lifecycle_settle.cpp).
  Delivery settleUnowed(LifecycleStore& store, const Message& message, const Classification& what,
                        const std::atomic<bool>& stopping);
  /// What settles it: acknowledge, or write its DLQ entry.
  SettleRequest settleRequest(const Message& message, const Classification& what) const;
  /// Counts and logs how it was settled; `owed` gets the recorded plan the store reported.
  /// `redelivered`: not the reader's first delivery (an unmatched ACK is then logged at info).
  Delivery afterSettle(const Message& message, const Classification& what,
                       Result<SettleVerdict> verdict, std::optional<Plan>& owed, bool redelivered);
  /// Gives back an unstarted claim; `unjournal` drops the journal record start() kept for it.
  void release(LifecycleStore& store, const Message& message, const PlannedInvocation* planned,
               const std::string& token, bool unjournal);
  /// Writes `record` to the message's attempt journal (best effort).
  void journal(LifecycleStore& store, const Message& message, const AttemptRecord& record);
  /// The one DLQ entry builder (docs/pipeline.md "Dead-letter entries").
  DlqEntry dlqEntry(const Message& message, DlqKind kind, std::string app, std::string handler,
                    std::string reason, int attempts, const ReplayOrigin* replay = nullptr) const;

  LifecycleSettings settings_;
  Catalog& catalog_;
  runtime::Runtime& runtime_;
  ConcurrencyLimiter& limiter_;
  ClaimRenewer* renewer_;
  LifecycleObserver& observer_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  Random& random_;
  std::function<void(std::int64_t)> wake_;
  RunningAttempts* running_;  // where a cancellation finds the attempt (null: not cancellable)
};

}  // namespace relay::invocation
