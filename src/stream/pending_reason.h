#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "invocation/catalog.h"
#include "invocation/plan.h"

namespace relay::stream {

/// One entry of the group's PEL, as `XPENDING <stream> <group> <start> <end> <count>` lists it.
struct PendingEntry {
  std::string id;
  std::string consumer;  // its owner: a worker, or invocation::kParkingConsumer
  std::int64_t idle_ms = 0;
  std::int64_t deliveries = 0;
};

/// What Redis holds about one pending message besides its PEL entry (docs/pipeline.md "State in
/// Redis"), read by the PendingInspector.
struct PendingFacts {
  /// The state hash (HGETALL), field by field; empty when there is none.
  std::vector<std::pair<std::string, std::string>> state;
  /// Why the state hash could not be read (a key of another type), empty when it could.
  std::string state_error;
  std::optional<std::int64_t> due_at_ms;       // its score in the due-retry index
  std::vector<std::string> paused_queue_apps;  // apps for which the paused queue holds it
  std::set<std::string> paused_apps;           // the apps paused cluster-wide
  bool owner_alive = false;                    // its owner's heartbeat key exists
  std::optional<bool> payload_exists;          // whether its stream entry exists, when read
  std::int64_t now_ms = 0;                     // Redis's clock (TIME), as the scripts see it
};

/// Why a message is still pending, most telling first (docs/operations.md "Pending messages").
enum class PendingKind {
  kRunning,       // a handler runs under a live claim
  kClaimed,       // claimed by a worker that has not started the handler yet (live claim)
  kClaimExpired,  // the claim's deadline passed: its worker died or lost Redis; a reclaim takes it
  kDue,           // an invocation may start now: waiting for a worker to take it
  kRetryWait,     // a failed attempt's backoff: the next attempt starts at `until_ms`
  // Flow control (docs/apps.md "Flow control"), from `relay:wait:<app>/<handler>`:
  kThrottled,    // its throttle reserved it a turn at `until_ms`
  kKeyBusy,      // its key runs its limit: it starts when one ends (`until_ms` 0) or at `until_ms`
  kDebounced,    // its burst's quiet period: it runs at `until_ms` unless a newer event replaces it
  kPaused,       // the app of the next invocation is paused (relay app pause)
  kParked,       // held by the parking consumer, but neither the due index nor the paused
                 // queue has it: nothing will take it back (stuck)
  kOwesDlq,      // exhausted, its DLQ entry not written yet
  kUnknownApp,   // the plan names an app or handler this worker does not know
  kUnavailable,  // the plan's app cannot run on this worker now (template, runtime)
  kNoState,      // no state at all: never started (queued in a worker, or held unclassified)
  kRetained,     // its state is retained (finished) but it was not acknowledged
  kResolved,     // every invocation is terminal but it was not acknowledged
  kCorrupt,      // a plan, marker or state key Relay cannot read
};

/// `running`, `claimed`, `claim_expired`, `due`, `retry_wait`, `throttled`, `key_busy`,
/// `debounced`, `paused`, `parked`, `owes_dlq`, `unknown_app`, `unavailable`, `no_state`,
/// `retained`, `resolved`, `corrupt`.
std::string_view kindName(PendingKind kind);

/// The reason of one pending message.
struct PendingReason {
  PendingKind kind = PendingKind::kNoState;
  std::string app;  // the invocation it is about, when it is about one
  std::string handler;
  int attempt = 0;            // its attempt (running, claimed, failed...)
  std::int64_t until_ms = 0;  // running/claimed: the claim's deadline; retry_wait: the next
                              // attempt; claim_expired: when the claim expired; throttled,
                              // key_busy, debounced: the earliest start (0: when woken)
  std::string detail;         // unavailable's reason, corrupt's text; retry_wait: `retry-after`
                              // when the handler asked for the wait (exit 75)
};

/// One pending message explained: its PEL entry, its age and why it is pending.
struct PendingReport {
  PendingEntry entry;
  std::int64_t age_ms = 0;  // now - the time in its id
  bool parked = false;      // owned by the parking consumer
  bool owner_alive = false;
  std::optional<std::int64_t> due_at_ms;
  std::optional<bool> payload_exists;
  std::vector<std::string> plan;  // `<app>/<handler>` of each planned invocation, in order
  PendingReason reason;
};

/// Explains `entry` from what Redis holds (`facts`), as the *start* script would see the
/// message: a live claim first; then, over the plan's invocations, an expired claim, one that
/// may start now, the earliest retry, a paused app, an app `catalog` does not know or cannot
/// run (skipped when `catalog` is null), an owed DLQ entry; every one terminal: resolved. A
/// message held by the parking consumer that no index holds is parked (stuck). Pure.
PendingReport explainPending(const PendingEntry& entry, const PendingFacts& facts,
                             invocation::Catalog* catalog = nullptr);

/// One line for people: what the message waits for, naming the invocation, the worker and the
/// times (RFC 3339, Redis time), e.g. `retry_wait: shop/bin/pay.sh attempt 2 failed; the next
/// attempt starts at 2026-01-01T10:05:00Z (in 4m)`.
std::string describe(const PendingReport& report);

/// The milliseconds in a stream id (its creation time, Redis time); 0 for a malformed id.
std::int64_t idMillis(std::string_view id);

}  // namespace relay::stream
