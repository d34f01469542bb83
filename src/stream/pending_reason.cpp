#include "stream/pending_reason.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "common/duration.h"
#include "common/enum_names.h"
#include "common/rfc3339.h"
#include "invocation/flow.h"
#include "invocation/keys.h"
#include "invocation/marker.h"
#include "invocation/paused_apps.h"
#include "stream/stream_id.h"

namespace relay::stream {
namespace {

using invocation::Marker;
using invocation::PlannedInvocation;

// The candidates of one message, the first of each kind in plan order (the earliest retry).
struct Candidates {
  std::optional<PendingReason> expired, due, retry, flow, paused, unknown, unavailable, owed;
};

PendingReason just(PendingKind kind) {
  PendingReason reason;
  reason.kind = kind;
  return reason;
}

PendingReason about(PendingKind kind, const PlannedInvocation& invocation, int attempt = 0,
                    std::int64_t until_ms = 0, std::string detail = {}) {
  return {kind, invocation.app, invocation.handler, attempt, until_ms, std::move(detail)};
}

// What keeps an invocation that could start from starting here: a paused app, an app or
// handler `catalog` does not know, or one it cannot run now.
std::optional<PendingReason> blocked(const PlannedInvocation& invocation, const PendingFacts& facts,
                                     invocation::Catalog* catalog) {
  if (facts.paused_apps.count(invocation.app) > 0) return about(PendingKind::kPaused, invocation);
  if (catalog == nullptr) return std::nullopt;
  const invocation::Runnable runnable = catalog->resolve(invocation);
  if (!runnable.known) return about(PendingKind::kUnknownApp, invocation, 0, 0, runnable.reason);
  if (runnable.available) return std::nullopt;
  if (runnable.reason == invocation::kPausedReason) return about(PendingKind::kPaused, invocation);
  return about(PendingKind::kUnavailable, invocation, 0, 0, runnable.reason);
}

// The invocations the message owes: its plan's, or (a state written before plans were
// recorded) the invocation fields of its hash.
std::optional<std::vector<PlannedInvocation>> invocationsOf(
    const std::map<std::string, std::string, std::less<>>& fields, PendingReason& corrupt) {
  std::vector<PlannedInvocation> out;
  if (const auto plan = fields.find(invocation::kPlanField); plan != fields.end()) {
    auto decoded = invocation::decodePlan(plan->second);
    if (!decoded) {
      corrupt = {PendingKind::kCorrupt,
                 {},
                 {},
                 0,
                 0,
                 "relay:plan \"" + plan->second + "\" cannot be read"};
      return std::nullopt;
    }
    return std::move(decoded->invocations);
  }
  for (const auto& [name, value] : fields) {
    if (name.rfind("relay:", 0) == 0) continue;
    const std::size_t slash = name.find('/');
    PlannedInvocation planned;
    planned.app = name.substr(0, slash);
    planned.handler = slash == std::string::npos ? "" : name.substr(slash + 1);
    out.push_back(std::move(planned));
  }
  return out;
}

// Why a planned invocation waits for its flow control, while it does: its `relay:wait:` field,
// until the earliest start it names (0: until its key wakes it).
std::optional<PendingReason> flowWait(const std::map<std::string, std::string, std::less<>>& fields,
                                      const PlannedInvocation& planned, int attempt,
                                      std::int64_t now_ms) {
  const auto text = fields.find(std::string(invocation::kWaitPrefix) + planned.field());
  if (text == fields.end()) return std::nullopt;
  const std::optional<invocation::FlowWaitState> wait = invocation::parseFlowWait(text->second);
  if (!wait || (wait->until != 0 && wait->until <= now_ms)) return std::nullopt;
  const PendingKind kind =
      wait->reason == invocation::FlowWait::kThrottled ? PendingKind::kThrottled
      : wait->reason == invocation::FlowWait::kKeyBusy ? PendingKind::kKeyBusy
                                                       : PendingKind::kDebounced;
  return about(kind, planned, attempt, wait->until);
}

PendingReason reasonOf(const PendingFacts& facts, invocation::Catalog* catalog,
                       std::vector<std::string>& plan) {
  if (!facts.state_error.empty()) {
    return {PendingKind::kCorrupt, {}, {}, 0, 0, "its state cannot be read: " + facts.state_error};
  }
  if (facts.state.empty()) return just(PendingKind::kNoState);
  const std::map<std::string, std::string, std::less<>> fields(facts.state.begin(),
                                                               facts.state.end());
  if (fields.count(invocation::kRetainedField) > 0) return just(PendingKind::kRetained);
  PendingReason corrupt;
  const auto invocations = invocationsOf(fields, corrupt);
  if (!invocations) return corrupt;
  for (const PlannedInvocation& planned : *invocations) plan.push_back(planned.field());
  // Only reserved fields (the deaths the reclaimer counted, docs/pipeline.md "Poison
  // messages"): nothing was planned, so nothing started.
  if (invocations->empty()) {
    PendingReason none = just(PendingKind::kNoState);
    if (const auto deaths = fields.find("relay:deaths"); deaths != fields.end()) {
      none.detail = deaths->second + " worker(s) died holding it";
    }
    return none;
  }
  Candidates found;
  const auto first = [](std::optional<PendingReason>& slot, std::optional<PendingReason> reason) {
    if (!slot && reason) slot = std::move(reason);
  };
  for (const PlannedInvocation& planned : *invocations) {
    const auto text = fields.find(planned.field());
    std::optional<Marker> marker;
    if (text != fields.end()) {
      marker = Marker::parse(text->second);
      if (!marker) {
        return about(PendingKind::kCorrupt, planned, 0, 0,
                     "marker \"" + text->second + "\" cannot be read");
      }
    }
    if (marker && marker->terminal()) continue;
    if (marker && marker->state == Marker::State::kExhausted) {
      first(found.owed, about(PendingKind::kOwesDlq, planned, marker->attempt));
      continue;
    }
    if (marker && marker->held()) {
      if (facts.now_ms < marker->deadline_ms) {
        return about(marker->state == Marker::State::kRunning ? PendingKind::kRunning
                                                              : PendingKind::kClaimed,
                     planned, marker->attempt, marker->deadline_ms);
      }
      first(found.expired,
            about(PendingKind::kClaimExpired, planned, marker->attempt, marker->deadline_ms));
      continue;
    }
    // Not started, or failed: it could start when due, unless its app cannot run.
    if (auto block = blocked(planned, facts, catalog)) {
      if (marker) block->attempt = marker->attempt;
      auto& slot = block->kind == PendingKind::kPaused       ? found.paused
                   : block->kind == PendingKind::kUnknownApp ? found.unknown
                                                             : found.unavailable;
      first(slot, std::move(block));
      continue;
    }
    if (marker && facts.now_ms < marker->next_attempt_ms) {
      if (!found.retry || marker->next_attempt_ms < found.retry->until_ms) {
        found.retry = about(PendingKind::kRetryWait, planned, marker->attempt,
                            marker->next_attempt_ms, marker->deferred ? "retry-after" : "");
      }
      continue;
    }
    if (auto wait = flowWait(fields, planned, marker ? marker->attempt : 0, facts.now_ms)) {
      first(found.flow, std::move(wait));
      continue;
    }
    first(found.due, about(PendingKind::kDue, planned, marker ? marker->attempt : 0,
                           marker ? marker->next_attempt_ms : 0));
  }
  for (auto* slot : {&found.expired, &found.due, &found.retry, &found.flow, &found.paused,
                     &found.unknown, &found.unavailable, &found.owed}) {
    if (*slot) return **slot;
  }
  return just(PendingKind::kResolved);
}

std::string timeOf(std::int64_t ms) {
  return formatRfc3339(WallTime(std::chrono::milliseconds(ms)));
}

// `in 4m` / `4m ago`, to the second.
std::string relative(std::int64_t ms, std::int64_t now_ms) {
  const auto span =
      std::chrono::milliseconds((std::max(ms, now_ms) - std::min(ms, now_ms)) / 1000 * 1000);
  return ms >= now_ms ? "in " + formatDuration(span) : formatDuration(span) + " ago";
}

std::string invocationName(const PendingReason& reason) {
  return reason.app + "/" + reason.handler;
}

// The reasons' names (`relay pending ls`, the metrics' `reason` label).
constexpr EnumNames<PendingKind, 17> kPendingKindNames = {{{
    {PendingKind::kRunning, "running"},
    {PendingKind::kClaimed, "claimed"},
    {PendingKind::kClaimExpired, "claim_expired"},
    {PendingKind::kDue, "due"},
    {PendingKind::kRetryWait, "retry_wait"},
    {PendingKind::kThrottled, "throttled"},
    {PendingKind::kKeyBusy, "key_busy"},
    {PendingKind::kDebounced, "debounced"},
    {PendingKind::kPaused, "paused"},
    {PendingKind::kParked, "parked"},
    {PendingKind::kOwesDlq, "owes_dlq"},
    {PendingKind::kUnknownApp, "unknown_app"},
    {PendingKind::kUnavailable, "unavailable"},
    {PendingKind::kNoState, "no_state"},
    {PendingKind::kRetained, "retained"},
    {PendingKind::kResolved, "resolved"},
    {PendingKind::kCorrupt, "corrupt"},
}}};

}  // namespace

std::string_view kindName(PendingKind kind) { return kPendingKindNames.name(kind); }

std::int64_t idMillis(std::string_view id) {
  const auto parsed = StreamId::parse(id);
  return parsed ? static_cast<std::int64_t>(parsed->ms) : 0;
}

PendingReport explainPending(const PendingEntry& entry, const PendingFacts& facts,
                             invocation::Catalog* catalog) {
  PendingReport report;
  report.entry = entry;
  report.age_ms = std::max<std::int64_t>(0, facts.now_ms - idMillis(entry.id));
  report.parked = entry.consumer == invocation::kParkingConsumer;
  report.owner_alive = facts.owner_alive;
  report.due_at_ms = facts.due_at_ms;
  report.payload_exists = facts.payload_exists;
  report.reason = reasonOf(facts, catalog, report.plan);
  // A parked message comes back only through an index (the due index, or the paused queue on
  // resume): held by the parking consumer without one, nothing takes it back. A key_busy
  // waiter is the exception: its key's queue takes it back when a slot frees.
  const PendingKind kind = report.reason.kind;
  const bool waits = kind == PendingKind::kClaimExpired || kind == PendingKind::kDue ||
                     kind == PendingKind::kRetryWait || kind == PendingKind::kThrottled ||
                     kind == PendingKind::kDebounced || kind == PendingKind::kPaused ||
                     kind == PendingKind::kUnknownApp || kind == PendingKind::kUnavailable ||
                     kind == PendingKind::kOwesDlq || kind == PendingKind::kNoState;
  if (report.parked && waits && !facts.due_at_ms && facts.paused_queue_apps.empty()) {
    report.reason.detail = std::string(kindName(kind)) +
                           (report.reason.detail.empty() ? "" : ": " + report.reason.detail);
    report.reason.kind = PendingKind::kParked;
  }
  return report;
}

std::string describe(const PendingReport& report) {
  const PendingReason& reason = report.reason;
  const std::int64_t now = report.age_ms + idMillis(report.entry.id);
  const std::string& owner = report.entry.consumer;
  const std::string who = owner + (report.parked        ? ""
                                   : report.owner_alive ? ""
                                                        : " (no heartbeat: gone)");
  const std::string attempt = " attempt " + std::to_string(reason.attempt);
  switch (reason.kind) {
    case PendingKind::kRunning:
      return invocationName(reason) + attempt + " is running on " + who +
             "; its claim holds until " + timeOf(reason.until_ms) + " (" +
             relative(reason.until_ms, now) + ")";
    case PendingKind::kClaimed:
      return invocationName(reason) + attempt + " is claimed by " + who +
             ", its handler not started yet; the claim holds until " + timeOf(reason.until_ms) +
             " (" + relative(reason.until_ms, now) + ")";
    case PendingKind::kClaimExpired:
      return invocationName(reason) + attempt + ": its claim expired at " +
             timeOf(reason.until_ms) + " (" + relative(reason.until_ms, now) +
             "): its worker died or lost Redis; a reclaim takes it over";
    case PendingKind::kDue:
      return invocationName(reason) +
             (reason.attempt == 0 ? " never started" : attempt + " failed") +
             " and may start now: waiting for a worker (held by " + who + ")";
    case PendingKind::kRetryWait:
      if (reason.detail == "retry-after") {
        return invocationName(reason) +
               " asked to run again later (exit 75, not charged); it runs again at " +
               timeOf(reason.until_ms) + " (" + relative(reason.until_ms, now) + ")";
      }
      return invocationName(reason) + attempt + " failed; the next attempt starts at " +
             timeOf(reason.until_ms) + " (" + relative(reason.until_ms, now) + ")";
    case PendingKind::kThrottled:
      return invocationName(reason) + " is throttled: its turn starts at " +
             timeOf(reason.until_ms) + " (" + relative(reason.until_ms, now) + ")";
    case PendingKind::kKeyBusy:
      // A first waiter is looked at again when the earliest slot of its key would lapse.
      return invocationName(reason) +
             " waits for its key: it starts when a running invocation of its key ends" +
             (reason.until_ms == 0 ? std::string()
                                   : " (looked at again at " + timeOf(reason.until_ms) + ", " +
                                         relative(reason.until_ms, now) + ")");
    case PendingKind::kDebounced:
      return invocationName(reason) + " is debounced: it runs at " + timeOf(reason.until_ms) +
             " (" + relative(reason.until_ms, now) +
             ") unless a newer event of its key "
             "replaces it";
    case PendingKind::kPaused:
      return "app " + reason.app + " is paused (" + invocationName(reason) +
             " waits; relay app resume " + reason.app + ")";
    case PendingKind::kParked:
      return "held by " + owner + " (" + reason.detail +
             ") but neither the due index nor the paused queue has it: nothing takes it back; "
             "resolve it with relay pending";
    case PendingKind::kOwesDlq:
      return invocationName(reason) + " exhausted its " + std::to_string(reason.attempt) +
             " attempts; its DLQ entry is not written yet (a redelivery writes it)";
    case PendingKind::kUnknownApp:
      return "its plan names " + invocationName(reason) +
             ", which this worker does not know (a replica with other rules runs it)" +
             (reason.detail.empty() ? "" : ": " + reason.detail);
    case PendingKind::kUnavailable:
      return "app " + reason.app + " cannot run here: " + reason.detail;
    case PendingKind::kNoState:
      return (report.owner_alive ? "never started: queued in " + owner +
                                       ", or held there while its app's rules are unknown"
                                 : "never started; its consumer " + owner +
                                       " has no heartbeat: a reclaim takes it over") +
             (reason.detail.empty() ? "" : " (" + reason.detail + ")");
    case PendingKind::kRetained:
      return "finished (its state is retained) but not acknowledged";
    case PendingKind::kResolved:
      return "every invocation is terminal but it was not acknowledged";
    case PendingKind::kCorrupt:
      return (reason.app.empty() ? "" : invocationName(reason) + ": ") + reason.detail;
  }
  return {};
}

}  // namespace relay::stream
