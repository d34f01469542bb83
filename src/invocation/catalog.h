#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "invocation/message.h"
#include "invocation/plan.h"
#include "runtime/runtime.h"

namespace relay::invocation {

/// Where a replay copy comes from (docs/replay.md "Copies"): set when the message is one.
struct ReplayOrigin {
  std::string replay;       // the replay's id
  std::string original_id;  // the message it copies
  std::string dlq_id;       // a dead-letter replay: the entry it came from (the invocation keeps
                            // the original message's RELAY_INVOCATION_ID); empty otherwise
};

/// What the local rules make of a message before anything runs.
struct Classification {
  enum class Kind {
    kPlan,         // matched (or an admitted schedule occurrence): `plan` is what it owes
    kUnmatched,    // an external event no rule matches: acknowledged, never retried
    kObsolete,     // a well-formed occurrence of a schedule that no longer exists
    kMalformed,    // can never run: dead-lettered with `reason`, then acknowledged
    kOversized,    // likewise, relay_dlq_entries_total{reason="oversized"}
    kBadSchedule,  // a malformed `relay_schedule` occurrence, likewise
    kHold,         // cannot be classified now (an app without any known rules): left pending
  };
  Kind kind = Kind::kHold;
  Plan plan;
  std::string reason;     // why (all but kPlan): for the log and the DLQ entry
  std::string dlq_event;  // what an unrunnable message's DLQ entry records as `event`
  std::string app = "-";  // for the DLQ entry and the log, when known
  std::string handler = "-";
  std::optional<ReplayOrigin> replay;  // a replay copy's origin
};

/// How one planned invocation can run on this worker now.
struct Runnable {
  bool known = false;      // the app is loaded and has this handler (rule or schedule)
  bool available = false;  // ...and it can run now (template valid, runtime ready, not paused)
  std::string reason;      // why not, for the log
  /// The runtime's view without the message-specific parts (id, attempt, input, trigger).
  runtime::InvocationSpec spec;
  int concurrency = 1;  // the app's own cap (the per-app limit is min(this, MAX_CONCURRENCY))
  std::shared_ptr<const void> keep_alive;  // what `spec` was resolved from
};

/// The local knowledge of apps the lifecycle needs (implemented over the app registry in
/// src/stream): how to classify a message and how to run a planned invocation. Thread-safe.
class Catalog {
 public:
  virtual ~Catalog() = default;
  /// Classifies `message` with the rules in effect now (`now` is the cut-off of now()).
  virtual Classification classify(const Message& message, WallTime now) = 0;
  /// Resolves a planned invocation with the apps in effect now. Unavailability (an invalid
  /// template, a runtime that cannot run the app, a paused app) is this one input.
  virtual Runnable resolve(const PlannedInvocation& invocation) = 0;
};

}  // namespace relay::invocation
