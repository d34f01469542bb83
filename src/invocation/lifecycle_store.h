#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "invocation/attempt_journal.h"
#include "invocation/backoff.h"
#include "invocation/dlq_entry.h"
#include "invocation/flow.h"
#include "invocation/keys.h"
#include "invocation/plan.h"

namespace relay::invocation {

/// How long a claim holds (docs/pipeline.md "Claims"): min(timeout + kill grace, lease) plus
/// the margin from the moment the store claims it, by the store's clock; renewals extend it.
/// After an outage (docs/pipeline.md "Outages": no worker has reached the store for longer than
/// `outage_gap`), an expired claim is not taken over for `takeover_grace`, so the worker that
/// holds it can renew it or record its handler's outcome first. Fixed internals.
struct ClaimTimes {
  std::chrono::milliseconds grace{2'000};
  std::chrono::milliseconds lease{60'000};
  std::chrono::milliseconds margin{30'000};
  std::chrono::milliseconds outage_gap{30'000};
  std::chrono::milliseconds takeover_grace{60'000};
};

/// How a worker can start one planned invocation now, as start() is told.
enum class Runnability : char {
  kReady = 'r',      // runnable here, and the caller holds a concurrency slot of its app
  kNeedsSlot = 's',  // runnable here, without a slot yet: start() answers kSlot when it is next
  kNotHere = 'n',    // not here (an unknown app or handler, an unavailable app): another worker
};

/// What start() is asked for one delivery.
struct StartRequest {
  Plan candidate;  // recorded unless a plan is, then the recorded one counts (kReplan)
  std::vector<Runnability> runnable;  // per planned invocation; missing: kNotHere
  std::string token;                  // the new claim's token, random per call
  std::string consumer;               // who delivers it: only the message's PEL owner may start it
  ClaimTimes times;
  /// The attempt journal's record of the attempt this call may claim (consumer, started_ms;
  /// app, handler and attempt are filled in by the store), best effort (journal()).
  std::optional<AttemptRecord> started;
  /// The delay after an attempt whose worker was lost while its handler ran (an expired
  /// running claim): the same fixed backoff as a failed attempt's.
  BackoffTable backoff;
  /// When an invocation this worker cannot run (kNotHere) is looked at again, by any worker.
  std::chrono::milliseconds retry_elsewhere{60'000};
};

/// A flow-control decision start() made about one planned invocation (docs/pipeline.md "Flow
/// control"), for the worker's metrics and logs.
struct FlowNote {
  enum class Kind {
    kDeferred,      // it waits (`reason`: throttled, key_busy, debounced) until `at` (0: woken)
    kDeduplicated,  // its dedupe key was first seen by message `other`: never run
    kSuperseded,    // message `other`, newer, replaced it before it ran
  };
  Kind kind = Kind::kDeferred;
  std::size_t index = 0;
  std::string reason;  // kDeferred
  std::string other;   // kDeduplicated, kSuperseded
  std::int64_t at = 0;
  bool operator==(const FlowNote&) const = default;
};

/// What start() decided for one delivery.
struct StartVerdict {
  enum class Kind {
    kRun,        // plan.invocations[index] is claimed (`claimed`) for `attempt` with the token
    kBusy,       // another claim on an invocation of this message is live: one at a time
    kSlot,       // plan.invocations[index] is next and runnable here, but kNeedsSlot: get one
    kPending,    // nothing can start now: the message is parked (`until`, `paused`)
    kOwesDlq,    // every invocation resolved; `owed` are exhausted without their DLQ entry
    kDone,       // every invocation terminal: acknowledge
    kReplan,     // another plan is recorded (`plan`): the message owes that one, start again
    kRetained,   // the message already left the PEL: this delivery is stale (re-acknowledged)
    kGone,       // the message is not pending (acknowledged or deleted elsewhere): stale
    kElsewhere,  // another consumer (`owner`) owns the message in the PEL now: stale here
  };
  Kind kind = Kind::kPending;
  std::size_t index = 0;  // kRun, kBusy, kSlot
  int attempt = 0;        // kRun, kBusy
  /// kPending: when the message is due again (Unix ms, store time; 0: only on resume), and
  /// the paused apps it waits for.
  std::int64_t until = 0;
  std::vector<std::string> paused;
  std::string owner;  // kElsewhere
  /// kOwesDlq: the invocations (plan indexes) and their attempt counts.
  std::vector<std::pair<std::size_t, int>> owed;
  /// kOwesDlq: why each owed entry is owed, in the same order: `exhausted`, `expired` (its
  /// deadline or start timeout passed) or `cancelled` (with a DLQ entry asked for).
  std::vector<std::string> owed_states;
  Plan plan;                    // kReplan: the recorded plan
  bool journal_failed = false;  // kRun: the started record could not be written (nothing else)
  std::vector<FlowNote> flow;   // what flow control decided on the way, whatever the kind
};

/// What happened to one attempt, as complete() records it.
struct AttemptResult {
  bool succeeded = false;
  bool cancelled = false;   // stopped by a cancellation (docs/pipeline.md "Cancellation")
  std::string exit_reason;  // `exit 3`, `timeout 20s`; empty on success
  std::string output_tail;  // the last bytes of the attempt's output
  std::chrono::nanoseconds duration{0};   // for the persisted statistics
  std::chrono::milliseconds retry_delay;  // the backoff after this attempt, if it failed
  /// The handler asked to be run again after `retry_after` (docs/runtimes.md "Retry-after"): not
  /// charged, unless the invocation was deferred `max_deferrals` times already (then a failure).
  bool deferred = false;
  std::chrono::milliseconds retry_after{0};
  int max_deferrals = 0;
};

/// How complete() landed.
struct CompleteVerdict {
  enum class Kind {
    kSucceeded,
    kFailed,     // a later attempt is due after the retry delay
    kExhausted,  // the last attempt failed (`dlq_written` when its entry was given and written)
    kCancelled,  // a cancellation ended it: never retried (its DLQ entry owed when one was asked)
    kStale,      // the claim is no longer this token's: nothing changed
    kRetained,   // the message already left the PEL
    kDeferred,   // AttemptResult::deferred within its cap: due again after retry_after, uncharged
  };
  Kind kind = Kind::kStale;
  bool dlq_written = false;
  bool acked = false;           // this was the last unresolved invocation: XACK + retention done
  int stats_failures = 0;       // statistics increments that failed (never change the lifecycle)
  bool journal_failed = false;  // the finished record could not be written (nothing else)
  int woke = 0;                 // waiters of its key made due now (docs/pipeline.md "Flow control")
};

/// How writeDlq() landed.
struct DlqVerdict {
  enum class Kind {
    kWritten,   // the entry was added and the invocation marked `...:dlq`
    kExists,    // a previous delivery already wrote it
    kStale,     // the invocation is not exhausted (state changed): nothing written
    kPlanned,   // (malformed field only) a plan is recorded: the message owes it (`plan`)
    kRetained,  // the message already left the PEL
  };
  Kind kind = Kind::kStale;
  bool acked = false;  // nothing else unresolved: XACK + retention done
  Plan plan;
  int stats_failures = 0;
};

/// How acknowledge() landed.
struct AckVerdict {
  enum class Kind {
    kAcked,       // XACK done; the state hash (if any) retained
    kUnresolved,  // a recorded plan still has a non-terminal invocation: refused (`plan`)
    kRetained,    // already retained by an earlier ACK
  };
  Kind kind = Kind::kAcked;
  Plan plan;
};

/// One message of a read that owes no invocation by its local classification (docs/pipeline.md
/// "Acknowledgements in batches"): acknowledge it (an unmatched event, an obsolete occurrence),
/// or, with `dlq`, write its DLQ entry as writeDlq(id, kMalformedField, *dlq) does.
struct SettleRequest {
  std::string id;
  bool obsolete_occurrence = false;
  std::optional<DlqEntry> dlq;
};

/// How one SettleRequest landed: acknowledge()'s verdict, or writeDlq()'s with `dlq`.
struct SettleVerdict {
  AckVerdict ack;
  std::optional<DlqVerdict> dlq;
};

/// What cancel() did to one invocation of the message.
struct CancelledInvocation {
  enum class What {
    kCancelled,  // it had not started (pending, due for a retry, parked, paused): cancelled now
    kRunning,    // an attempt runs under `token`: its worker is told (the cancels stream)
    kOrphaned,   // claimed by a worker that is gone: cancelled when the claim is taken over
    kFinished,   // terminal already (or owing its DLQ entry): nothing to cancel
  };
  std::string field;
  What what = What::kFinished;
  std::string token;  // kRunning, kOrphaned
};

/// How cancel() landed (docs/pipeline.md "Cancellation").
struct CancelVerdict {
  enum class Kind {
    kApplied,    // the request is recorded and applied to the plan (`invocations`)
    kRequested,  // no plan yet (not read, or not started): applied at its first start
    kFinished,   // the message left the PEL already: nothing to cancel
    kMissing,    // no such message in the stream
  };
  Kind kind = Kind::kMissing;
  bool acked = false;  // every planned invocation is terminal now: acknowledged and retained
  std::vector<CancelledInvocation> invocations;
};

/// A cancellation: which invocations of a message (`target`: `*` every one, `<app>/*` an app's,
/// `<app>/<handler>` one), whether each gets a DLQ entry, and the request's id (for logs).
struct CancelRequest {
  std::string target = "*";
  bool dead_letter = false;
  std::string id;
};

enum class ReleaseVerdict { kReleased, kNotHeld, kRetained };
enum class RenewVerdict { kRenewed, kLost, kRetained };
enum class BeginVerdict { kRunning, kLost, kRetained };

/// The invocation lifecycle's persistent state (docs/pipeline.md "State in Redis"): every verb
/// is one atomic step (a Lua script in Redis) that reads the time from the store's own clock,
/// is idempotent for its claim token (a call repeated after a lost reply returns the same
/// verdict and changes nothing twice) and is inert once the message's state is retained.
/// Implementations: RedisLifecycleStore, and the in-memory fake of the unit tests. An instance
/// serves one thread at a time unless the implementation says otherwise.
class LifecycleStore {
 public:
  virtual ~LifecycleStore() = default;

  /// Claims the next invocation of message `id` (docs/pipeline.md "One message", "Waiting"):
  /// only for the message's PEL owner (kGone, kElsewhere otherwise); records the candidate plan
  /// unless one is recorded (then kReplan unless they are equal); takes over expired claims
  /// (an unstarted one uncharged, a started one charged, with the backoff; not right after an
  /// outage: ClaimTimes); then claims, in plan order, the first due invocation that is
  /// kReady and whose app is not paused (kSlot when the first such is kNeedsSlot), with the
  /// uncharged marker `claimed`. Never claims while another token holds a live claim on any
  /// invocation of the message. When nothing can start, parks the message (kPending): it moves
  /// to the parking consumer, in the due index until its earliest due time and in the paused
  /// queue for its paused apps. A new claim keeps `started` in the attempt journal.
  virtual Result<StartVerdict> start(std::string_view id, const StartRequest& request) = 0;
  /// The claimed invocation's handler has started: its claim becomes `running`, and from now on
  /// the attempt counts as executed even if the worker dies (docs/pipeline.md "Claims").
  virtual Result<BeginVerdict> begin(std::string_view id, std::string_view field,
                                     std::string_view token) = 0;
  /// Tells the store a worker reaches it now (every renewal interval): a gap longer than
  /// ClaimTimes::outage_gap since the last call is an outage, after which expired claims wait
  /// ClaimTimes::takeover_grace before anyone takes them over.
  virtual Status heartbeat(const ClaimTimes& times) = 0;
  /// Records the outcome of the attempt claimed with `token`. A failure of the last attempt
  /// with `dlq` given writes that entry (deliveries filled in by the store) in the same step.
  /// When no invocation is left unresolved, the message is acknowledged and retained too.
  /// `finished`, when given, goes to the attempt journal in the same step whatever the verdict,
  /// best effort (journal()). `flow`, the invocation's flow control, names the key slots the
  /// claim holds: they go back in the same step and the key's next waiters are woken.
  virtual Result<CompleteVerdict> complete(std::string_view id, std::string_view field,
                                           std::string_view token, const AttemptResult& result,
                                           const DlqEntry* dlq,
                                           const AttemptRecord* finished = nullptr,
                                           const FlowControl* flow = nullptr) = 0;
  /// Gives back a claim whose handler never started (nothing charged); the invocation is due
  /// again after `retry_after`. An empty `field` releases whichever invocation `token` holds
  /// (after start() failed, the caller cannot know which one it claimed). With `unjournal`, a
  /// released claim's attempt record (the one start() kept) leaves the attempt journal in the
  /// same step: no handler ran. `flow` as for complete(): the claim's key slots go back.
  virtual Result<ReleaseVerdict> release(std::string_view id, std::string_view field,
                                         std::string_view token,
                                         std::chrono::milliseconds retry_after,
                                         bool unjournal = false,
                                         const FlowControl* flow = nullptr) = 0;
  /// Extends a running claim to at least `extend` from now and refreshes the message's PEL
  /// idle time for this consumer (a long handler keeps its message); the key slots `flow` names
  /// are held as long.
  virtual Result<RenewVerdict> renew(std::string_view id, std::string_view field,
                                     std::string_view token, std::chrono::milliseconds extend,
                                     const FlowControl* flow = nullptr) = 0;
  /// Writes the owed DLQ entry of an exhausted invocation, or of an unrunnable message (field
  /// kMalformedField), then acknowledges when nothing else is unresolved.
  virtual Result<DlqVerdict> writeDlq(std::string_view id, std::string_view field,
                                      const DlqEntry& entry) = 0;
  /// XACK plus retention; refused while a recorded plan is unresolved, except, with
  /// `obsolete_occurrence`, a schedule occurrence's plan none of whose invocations is running
  /// (its schedule no longer exists: docs/schedules.md "Consumption").
  virtual Result<AckVerdict> acknowledge(std::string_view id, bool obsolete_occurrence = false) = 0;
  /// A pending id whose stream entry is gone: XACK and retention of its state, inert once
  /// retained.
  virtual Status clearMissing(std::string_view id) = 0;
  /// Cancels invocations of message `id` (docs/pipeline.md "Cancellation"): records the request
  /// in its state (start() applies it to what has not started, complete() makes the end of a
  /// running attempt `cancelled`), cancels at once what the plan owes and has not started, and
  /// names the running attempts (their workers are told through the cancels stream, in the same
  /// step). Acknowledges the message once its plan is terminal. Idempotent.
  virtual Result<CancelVerdict> cancel(std::string_view id, const CancelRequest& request) = 0;
  /// Keeps `record` in message `id`'s attempt journal (attempt_journal.h), replacing the record
  /// of the same attempt; not a transition: written whatever the state, expiring with the
  /// retention after its last write. For the console only: start() and complete() write their
  /// records the same way in their own step, and a record that cannot be written changes no
  /// verdict there (only `journal_failed` says so).
  virtual Status journal(std::string_view id, const AttemptRecord& record) = 0;
  /// acknowledge() or writeDlq() of each request, verdicts in request order, each as atomic and
  /// idempotent as alone; a store that can sends them all in one round trip
  /// (RedisLifecycleStore: one pipeline, all the acknowledgements in one script call). The
  /// default calls them one after another.
  virtual std::vector<Result<SettleVerdict>> settle(const std::vector<SettleRequest>& requests) {
    std::vector<Result<SettleVerdict>> verdicts;
    for (const SettleRequest& request : requests) {
      if (request.dlq) {
        auto written = writeDlq(request.id, kMalformedField, *request.dlq);
        if (written.ok()) {
          verdicts.emplace_back(SettleVerdict{{}, std::move(written).value()});
        } else {
          verdicts.emplace_back(written.error());
        }
      } else {
        auto acked = acknowledge(request.id, request.obsolete_occurrence);
        if (acked.ok()) {
          verdicts.emplace_back(SettleVerdict{std::move(acked).value(), std::nullopt});
        } else {
          verdicts.emplace_back(acked.error());
        }
      }
    }
    return verdicts;
  }
};

}  // namespace relay::invocation
