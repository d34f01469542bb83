#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "common/duration.h"
#include "fakes/in_memory_flow.h"
#include "invocation/keys.h"
#include "invocation/lifecycle_store.h"
#include "invocation/marker.h"

namespace relay::testing {

/// The LifecycleStore of the unit tests: the same verbs and verdicts as the Lua scripts of
/// RedisLifecycleStore (src/invocation/lifecycle_scripts.cpp), rule for rule, over maps, with
/// `clock` as the store's one clock (Redis TIME in production). Also models what the scripts
/// touch beyond the state hash: the PEL (ids delivered and not acknowledged), the DLQ stream,
/// the due-retry index, retention, the statistics and flow control (in_memory_flow.h).
/// Thread-safe; one instance may serve many threads (and replicas), like one Redis.
class InMemoryLifecycleStore final : public invocation::LifecycleStore {
 public:
  using Hash = std::map<std::string, std::string>;
  using DlqFields = std::vector<std::pair<std::string, std::string>>;

  explicit InMemoryLifecycleStore(Clock& clock,
                                  std::chrono::milliseconds retention = std::chrono::hours(168),
                                  std::chrono::milliseconds key_promise = std::chrono::seconds(30))
      : clock_(clock), retention_(retention), key_promise_(key_promise) {}

  /// XREADGROUP's side: `id` enters the PEL (or its delivery count grows), owned by `consumer`.
  void deliver(const std::string& id, const std::string& consumer = "w1") {
    std::lock_guard lock(mutex_);
    ++pel_[id];
    owner_[id] = consumer;
    published_.insert(id);
    delivered_.insert(id);
  }
  /// XADD's side: `id` is in the stream, not read by the group yet.
  void publish(const std::string& id) {
    std::lock_guard lock(mutex_);
    published_.insert(id);
  }
  /// The cancels stream (docs/pipeline.md "Cancellation"): (id, field, token) per running
  /// attempt a cancel() named, in order.
  std::vector<std::tuple<std::string, std::string, std::string>> cancels() const {
    std::lock_guard lock(mutex_);
    return cancels_;
  }
  /// XCLAIM's side (a reclaim, the due poller): `consumer` owns the pending `id` now; with
  /// `justid` the delivery count stays (XCLAIM ... JUSTID).
  void claimFor(const std::string& id, const std::string& consumer, bool justid = false) {
    std::lock_guard lock(mutex_);
    if (!pel_.count(id)) return;
    if (!justid) ++pel_[id];
    owner_[id] = consumer;
  }
  /// Who owns `id` in the PEL ("" when it is not pending).
  std::string owner(const std::string& id) const {
    std::lock_guard lock(mutex_);
    auto found = owner_.find(id);
    return pel_.count(id) && found != owner_.end() ? found->second : std::string();
  }
  /// `relay app pause` / `resume`: the paused set, and on resume the app's parked messages
  /// move to the due index, due now.
  void pause(const std::string& app) {
    std::lock_guard lock(mutex_);
    paused_.insert(app);
  }
  void resume(const std::string& app) {
    std::lock_guard lock(mutex_);
    paused_.erase(app);
    for (auto it = paused_queue_.begin(); it != paused_queue_.end();) {
      if (it->first == app) {
        due_[it->second] = nowMs();
        it = paused_queue_.erase(it);
      } else {
        ++it;
      }
    }
  }
  /// Whether `id` waits in the paused queue for `app`.
  bool parkedFor(const std::string& app, const std::string& id) const {
    std::lock_guard lock(mutex_);
    return paused_queue_.count({app, id}) > 0;
  }
  /// Makes the next call of `verb` ("start", "complete", "release", "write_dlq", "acknowledge")
  /// apply its change and then fail as if the reply had been lost (a killed connection).
  void loseNextReply(const std::string& verb) {
    std::lock_guard lock(mutex_);
    lose_.insert(verb);
  }

  // Introspection for assertions.
  bool pending(const std::string& id) const {
    std::lock_guard lock(mutex_);
    return pel_.count(id) > 0;
  }
  std::optional<std::string> field(const std::string& id, const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto hash = state_.find(id);
    if (hash == state_.end()) return std::nullopt;
    auto value = hash->second.find(name);
    if (value == hash->second.end()) return std::nullopt;
    return value->second;
  }
  std::optional<invocation::Marker> marker(const std::string& id, const std::string& name) const {
    auto text = field(id, name);
    if (!text) return std::nullopt;
    return invocation::Marker::parse(*text);
  }
  bool retained(const std::string& id) const {
    return field(id, std::string(invocation::kRetainedField)).has_value();
  }
  /// The TTL retention gave the state hash (nullopt: none, kept while pending).
  std::optional<std::chrono::milliseconds> ttl(const std::string& id) const {
    std::lock_guard lock(mutex_);
    auto found = ttl_.find(id);
    if (found == ttl_.end()) return std::nullopt;
    return found->second;
  }
  std::vector<DlqFields> dlq() const {
    std::lock_guard lock(mutex_);
    return dlq_;
  }
  std::optional<std::int64_t> dueAt(const std::string& id) const {
    std::lock_guard lock(mutex_);
    auto found = due_.find(id);
    if (found == due_.end()) return std::nullopt;
    return found->second;
  }
  std::int64_t nowMs() const { return unixMillis(clock_.now()); }
  /// A persisted statistic (`<app>/<handler>:<counter>`), 0 when never counted.
  long long stat(const std::string& field, const std::string& counter) const {
    std::lock_guard lock(mutex_);
    auto found = stats_.find(field + ":" + counter);
    return found == stats_.end() ? 0 : found->second;
  }
  /// The members of a flow key's running set or queue (invocation::StreamKeys::flow names).
  std::vector<std::string> flowRunning(const std::string& key) const {
    std::lock_guard lock(mutex_);
    return flow_.running(key);
  }
  std::vector<std::string> flowWaiting(const std::string& key) const {
    std::lock_guard lock(mutex_);
    return flow_.waiting(key);
  }
  /// Overwrites a raw field (corrupt or foreign state).
  void setField(const std::string& id, const std::string& name, const std::string& value) {
    std::lock_guard lock(mutex_);
    state_[id][name] = value;
  }

  Result<invocation::StartVerdict> start(std::string_view id,
                                         const invocation::StartRequest& request) override {
    std::lock_guard lock(mutex_);
    auto verdict = startLocked(std::string(id), request);
    return maybeLose("start", std::move(verdict));
  }

  Result<invocation::BeginVerdict> begin(std::string_view id, std::string_view field,
                                         std::string_view token) override {
    std::lock_guard lock(mutex_);
    const std::string key(id);
    if (isRetained(key)) return invocation::BeginVerdict::kRetained;
    auto m = markerOf(key, std::string(field));
    if (!m || m->token != token) return maybeLose("begin", invocation::BeginVerdict::kLost);
    if (m->state == State::kClaimed) {
      m->state = State::kRunning;
      state_[key][std::string(field)] = m->format();
    }
    return maybeLose("begin", invocation::BeginVerdict::kRunning);
  }

  Status heartbeat(const invocation::ClaimTimes& times) override {
    std::lock_guard lock(mutex_);
    (void)observeClock(times);
    return {};
  }

  Result<invocation::CompleteVerdict> complete(
      std::string_view id, std::string_view field, std::string_view token,
      const invocation::AttemptResult& result, const invocation::DlqEntry* dlq,
      const invocation::AttemptRecord* finished = nullptr,
      const invocation::FlowControl* flow = nullptr) override {
    std::lock_guard lock(mutex_);
    // The finished record first, whatever the verdict.
    const bool unjournaled = finished && !journalLocked(std::string(id), *finished);
    auto verdict =
        completeLocked(std::string(id), std::string(field), std::string(token), result, dlq, flow);
    if (verdict.ok()) verdict->journal_failed = unjournaled;
    return maybeLose("complete", std::move(verdict));
  }

  Result<invocation::ReleaseVerdict> release(
      std::string_view id, std::string_view field, std::string_view token,
      std::chrono::milliseconds retry_after, bool unjournal = false,
      const invocation::FlowControl* flow = nullptr) override {
    std::lock_guard lock(mutex_);
    const std::string key(id);
    if (isRetained(key)) return invocation::ReleaseVerdict::kRetained;
    std::string name(field);
    if (name.empty()) {
      for (const auto& planned : planOf(key).invocations) {
        if (heldBy(key, planned.field(), token)) name = planned.field();
      }
    }
    auto held = heldBy(key, name, token);
    if (name.empty() || !held) return maybeLose("release", invocation::ReleaseVerdict::kNotHeld);
    invocation::Marker back;
    back.state = invocation::Marker::State::kFailed;
    back.attempt = held->attempt - 1;
    back.next_attempt_ms = nowMs() + retry_after.count();
    back.token = "-";
    state_[key][name] = back.format();
    reindex(key);
    if (unjournal) journals_[key].erase(name + "#" + std::to_string(held->attempt));
    InMemoryFlow::Context ctx = flowContext();
    flow_.giveBack(flow, name, std::string(token), ctx);
    return maybeLose("release", invocation::ReleaseVerdict::kReleased);
  }

  Result<invocation::RenewVerdict> renew(std::string_view id, std::string_view field,
                                         std::string_view token, std::chrono::milliseconds extend,
                                         const invocation::FlowControl* flow = nullptr) override {
    std::lock_guard lock(mutex_);
    const std::string key(id);
    if (isRetained(key)) return invocation::RenewVerdict::kRetained;
    auto held = heldBy(key, std::string(field), token);
    if (!held) return invocation::RenewVerdict::kLost;
    held->deadline_ms = std::max(held->deadline_ms, nowMs() + extend.count());
    state_[key][std::string(field)] = held->format();
    flow_.renew(flow, field, std::string(token), held->deadline_ms);
    renewed_.insert(key);
    return invocation::RenewVerdict::kRenewed;
  }

  Result<invocation::DlqVerdict> writeDlq(std::string_view id, std::string_view field,
                                          const invocation::DlqEntry& entry) override {
    std::lock_guard lock(mutex_);
    return maybeLose("write_dlq", writeDlqLocked(std::string(id), std::string(field), entry));
  }

  Result<invocation::AckVerdict> acknowledge(std::string_view id,
                                             bool obsolete_occurrence = false) override {
    std::lock_guard lock(mutex_);
    const std::string key(id);
    invocation::AckVerdict verdict;
    if (isRetained(key)) {
      pel_.erase(key);
      verdict.kind = invocation::AckVerdict::Kind::kRetained;
      return maybeLose("acknowledge", verdict);
    }
    bool obsolete = obsolete_occurrence;
    for (const auto& planned : planOf(key).invocations) {
      auto m = markerOf(key, planned.field());
      if (planned.trigger != runtime::Trigger::kSchedule) obsolete = false;
      if (m && m->held() && nowMs() < m->deadline_ms) obsolete = false;
      // An owed DLQ entry is written first.
      if (m && m->owesDlq()) obsolete = false;
    }
    if (!resolved(key) && !obsolete) {
      verdict.kind = invocation::AckVerdict::Kind::kUnresolved;
      verdict.plan = planOf(key);
      return maybeLose("acknowledge", verdict);
    }
    ackAndRetain(key);
    return maybeLose("acknowledge", verdict);
  }

  Status clearMissing(std::string_view id) override {
    std::lock_guard lock(mutex_);
    const std::string key(id);
    if (isRetained(key)) {
      pel_.erase(key);
      return {};
    }
    ackAndRetain(key);
    return {};
  }

  Result<invocation::CancelVerdict> cancel(std::string_view id,
                                           const invocation::CancelRequest& request) override {
    std::lock_guard lock(mutex_);
    using Kind = invocation::CancelVerdict::Kind;
    using What = invocation::CancelledInvocation::What;
    const std::string key(id);
    invocation::CancelVerdict verdict;
    if (isRetained(key)) {
      verdict.kind = Kind::kFinished;
      return verdict;
    }
    if (!pel_.count(key) && !hasPlan(key)) {
      verdict.kind = !published_.count(key)  ? Kind::kMissing
                     : delivered_.count(key) ? Kind::kFinished
                                             : Kind::kRequested;
      if (verdict.kind != Kind::kRequested) return verdict;
    }
    state_[key][std::string(invocation::kCancelPrefix) + request.target] =
        std::string(request.dead_letter ? "1 " : "0 ") + request.id;
    if (!hasPlan(key)) {
      verdict.kind = Kind::kRequested;
      return verdict;
    }
    verdict.kind = Kind::kApplied;
    const invocation::Plan plan = planOf(key);
    for (const auto& planned : plan.invocations) {
      const std::string name = planned.field();
      if (request.target != "*" && request.target != name && request.target != planned.app + "/*")
        continue;
      auto m = markerOf(key, name);
      invocation::CancelledInvocation invocation{name, What::kFinished, ""};
      if (m && (m->terminal() || m->owesDlq())) {
        // nothing to cancel
      } else if (m && m->held() && nowMs() < m->deadline_ms) {
        invocation.what = What::kRunning;
        invocation.token = m->token;
        cancels_.emplace_back(key, name, m->token);
      } else if (m && m->held()) {
        invocation.what = What::kOrphaned;
        invocation.token = m->token;
        due_[key] = nowMs();
      } else {
        // It waited for its flow control: its place in its key's queue goes, and a slot
        // promised to it goes to the next waiter (the cancel script's leave_queue).
        state_[key].erase(std::string(invocation::kWaitPrefix) + name);
        InMemoryFlow::Context ctx = flowContext();
        flow_.leave(planned, key, ctx);
        endNow(key, name, State::kCancelled, m ? m->attempt : 0, request.id, request.dead_letter,
               "cancelled");
        invocation.what = What::kCancelled;
      }
      verdict.invocations.push_back(std::move(invocation));
    }
    if (resolved(key)) {
      ackAndRetain(key);
      for (const auto& planned : plan.invocations) paused_queue_.erase({planned.app, key});
      verdict.acked = true;
      return verdict;
    }
    bool owes = false;
    for (const auto& planned : plan.invocations) {
      auto m = markerOf(key, planned.field());
      owes = owes || (m && m->owesDlq());
    }
    if (owes) {
      due_[key] = nowMs();
    } else {
      reindex(key);
    }
    return verdict;
  }

  Status journal(std::string_view id, const invocation::AttemptRecord& record) override {
    std::lock_guard lock(mutex_);
    if (!journalLocked(std::string(id), record)) {
      return Error::io("in-memory store: attempt journal of " + std::string(id) + " broken");
    }
    return {};
  }
  /// Makes every later journal write of `id` fail, as a key of another type would in Redis.
  void breakJournal(const std::string& id) {
    std::lock_guard lock(mutex_);
    broken_journals_.insert(id);
  }
  /// The attempt journal of `id`, as the console reads it.
  std::vector<invocation::AttemptRecord> attempts(const std::string& id) const {
    std::lock_guard lock(mutex_);
    auto found = journals_.find(id);
    if (found == journals_.end()) return {};
    return invocation::parseAttempts({found->second.begin(), found->second.end()});
  }

  /// Whether renew() refreshed `id`'s PEL idle time since the last call.
  bool takeRenewed(const std::string& id) {
    std::lock_guard lock(mutex_);
    return renewed_.erase(id) > 0;
  }

 private:
  using State = invocation::Marker::State;

  static invocation::Marker makeMarker(State state, int attempt, std::string token) {
    invocation::Marker marker;
    marker.state = state;
    marker.attempt = attempt;
    marker.token = std::move(token);
    return marker;
  }
  static invocation::StartVerdict startVerdict(invocation::StartVerdict::Kind kind,
                                               std::size_t index = 0, int attempt = 0) {
    invocation::StartVerdict verdict;
    verdict.kind = kind;
    verdict.index = index;
    verdict.attempt = attempt;
    return verdict;
  }
  static invocation::DlqVerdict dlqVerdict(invocation::DlqVerdict::Kind kind, bool acked = false,
                                           invocation::Plan plan = {}) {
    invocation::DlqVerdict verdict;
    verdict.kind = kind;
    verdict.acked = acked;
    verdict.plan = std::move(plan);
    return verdict;
  }

  template <typename T>
  Result<T> maybeLose(const std::string& verb, T value) {
    if (lose_.erase(verb)) return Error::io("in-memory store: reply to " + verb + " lost");
    return value;
  }
  template <typename T>
  Result<T> maybeLose(const std::string& verb, Result<T> value) {
    if (value.ok() && lose_.erase(verb)) {
      return Error::io("in-memory store: reply to " + verb + " lost");
    }
    return value;
  }

  /// Keeps `record` in `key`'s journal; false when that journal is broken.
  bool journalLocked(const std::string& key, const invocation::AttemptRecord& record) {
    if (broken_journals_.count(key)) return false;
    journals_[key][invocation::attemptField(record)] = invocation::encodeAttempt(record);
    return true;
  }

  bool isRetained(const std::string& key) const {
    auto hash = state_.find(key);
    return hash != state_.end() && hash->second.count(std::string(invocation::kRetainedField));
  }
  std::optional<invocation::Marker> markerOf(const std::string& key, const std::string& name) {
    auto hash = state_.find(key);
    if (hash == state_.end()) return std::nullopt;
    auto value = hash->second.find(name);
    if (value == hash->second.end()) return std::nullopt;
    return invocation::Marker::parse(value->second);
  }
  /// The marker of `name` while `token` holds its claim (claimed or running); nullopt otherwise.
  std::optional<invocation::Marker> heldBy(const std::string& key, const std::string& name,
                                           std::string_view token) {
    auto held = markerOf(key, name);
    if (!held || !held->held() || held->token != token) return std::nullopt;
    return held;
  }
  bool hasPlan(const std::string& key) const {
    auto hash = state_.find(key);
    return hash != state_.end() && hash->second.count(std::string(invocation::kPlanField));
  }
  invocation::Plan planOf(const std::string& key) const {
    if (!hasPlan(key)) return {};
    return invocation::decodePlan(state_.at(key).at(std::string(invocation::kPlanField)))
        .value_or(invocation::Plan{});
  }
  /// docs/pipeline.md "Cancellation": the request naming `planned` (the Lua library's
  /// cancel_request): whether one does, and whether it asks for a DLQ entry.
  std::optional<bool> cancelRequest(const std::string& key,
                                    const invocation::PlannedInvocation& planned) const {
    auto hash = state_.find(key);
    if (hash == state_.end()) return std::nullopt;
    const std::string prefix(invocation::kCancelPrefix);
    for (const std::string& target : {planned.field(), planned.app + "/*", std::string("*")}) {
      auto found = hash->second.find(prefix + target);
      if (found != hash->second.end()) return found->second.rfind("1 ", 0) == 0;
    }
    return std::nullopt;
  }
  /// The recorded plan with its limits (docs/apps.md "Deadlines").
  invocation::Plan planWithLimits(const std::string& key) const {
    invocation::Plan plan = planOf(key);
    auto hash = state_.find(key);
    if (hash == state_.end()) return plan;
    auto limits = hash->second.find(std::string(invocation::kLimitsField));
    if (limits != hash->second.end()) (void)invocation::applyLimits(plan, limits->second);
    return plan;
  }
  /// When attempt `attempt` may no longer start and why (the Lua library's expiry()).
  static std::optional<std::pair<std::int64_t, std::string>> expiry(
      const invocation::PlannedInvocation& planned, std::int64_t born, int attempt) {
    std::optional<std::pair<std::int64_t, std::string>> gone;
    if (planned.deadline.count() > 0) {
      gone = {born + planned.deadline.count(), "deadline " + formatDuration(planned.deadline)};
    }
    if (attempt == 1 && planned.start_timeout.count() > 0 &&
        (!gone || born + planned.start_timeout.count() < gone->first)) {
      gone = {born + planned.start_timeout.count(),
              "start_timeout " + formatDuration(planned.start_timeout)};
    }
    return gone;
  }
  static std::string stateName(State state) {
    return state == State::kExpired     ? "expired"
           : state == State::kCancelled ? "cancelled"
                                        : "exhausted";
  }
  static std::int64_t bornOf(const std::string& id) {
    std::int64_t ms = 0;
    for (char c : id) {
      if (c < '0' || c > '9') break;
      ms = ms * 10 + (c - '0');
    }
    return ms;
  }
  /// The invocation ends without another attempt (the start script's end_now).
  invocation::Marker endNow(const std::string& key, const std::string& name, State state, int ran,
                            const std::string& token, bool dead, const std::string& why) {
    invocation::Marker ended = makeMarker(state, ran, token);
    ended.dead_letter = dead;
    state_[key][name] = ended.format();
    const std::string reason_field = std::string(invocation::kReasonPrefix) + name;
    auto last = state_[key].find(reason_field);
    const std::string previous = last == state_[key].end() ? "" : last->second;
    state_[key][reason_field] = why + (previous.empty() ? "" : " (last attempt: " + previous + ")");
    return ended;
  }

  bool resolved(const std::string& key) {
    for (const auto& planned : planOf(key).invocations) {
      auto m = markerOf(key, planned.field());
      if (!m || !m->terminal()) return false;
    }
    return true;
  }
  void reindex(const std::string& key) {
    std::optional<std::int64_t> earliest;
    for (const auto& planned : planOf(key).invocations) {
      auto m = markerOf(key, planned.field());
      if (m && m->state == State::kFailed && (!earliest || m->next_attempt_ms < *earliest)) {
        earliest = m->next_attempt_ms;
      }
    }
    if (earliest) {
      due_[key] = *earliest;
    } else {
      due_.erase(key);
    }
  }
  void ackAndRetain(const std::string& key) {
    pel_.erase(key);
    due_.erase(key);
    auto hash = state_.find(key);
    if (hash == state_.end()) return;
    hash->second[std::string(invocation::kRetainedField)] = "1";
    if (retention_.count() > 0) ttl_[key] = retention_;
  }
  void addDlq(const std::string& key, const invocation::DlqEntry& entry, const std::string& name) {
    // An owed entry (written later, by whoever redelivers) takes the failing attempt's exit
    // reason and output tail from the state.
    const bool owed = entry.exit_reason.empty();
    auto reason = state_[key].find(std::string(invocation::kReasonPrefix) + name);
    auto tail = state_[key].find(std::string(invocation::kTailPrefix) + name);
    const bool has_reason = owed && reason != state_[key].end();
    DlqFields fields;
    for (auto& [field_name, value] : entry.fields()) {
      if (field_name == "deliveries") {
        fields.emplace_back(field_name, std::to_string(pel_[key]));
      } else if (field_name == "reason" && has_reason) {
        fields.emplace_back(field_name, reason->second);
      } else {
        fields.emplace_back(field_name, value);
      }
    }
    if (has_reason) fields.emplace_back("exit_reason", reason->second);
    if (owed && tail != state_[key].end()) fields.emplace_back("output_tail", tail->second);
    dlq_.push_back(std::move(fields));
  }

  InMemoryFlow::Context flowContext(std::vector<invocation::FlowNote>* notes = nullptr) {
    InMemoryFlow::Context ctx{due_, pel_};
    ctx.now = nowMs();
    ctx.promise = key_promise_;
    ctx.notes = notes;
    ctx.stats = &stats_;
    return ctx;
  }

  /// docs/pipeline.md "Outages" (the Lua library's observe_clock): notes now; whether expired
  /// claims may be taken over.
  bool observeClock(const invocation::ClaimTimes& times) {
    const std::int64_t now = nowMs();
    if (!clock_seen_ || now - *clock_seen_ > times.outage_gap.count()) clock_resumed_ = now;
    clock_seen_ = now;
    return now >= clock_resumed_ + times.takeover_grace.count();
  }

  Result<invocation::StartVerdict> startLocked(const std::string& key,
                                               const invocation::StartRequest& request) {
    using Kind = invocation::StartVerdict::Kind;
    using invocation::Runnability;
    invocation::StartVerdict verdict;
    const bool pending = pel_.count(key) > 0;
    if (isRetained(key)) {
      pel_.erase(key);  // a finished message delivered again leaves again
      return startVerdict(Kind::kRetained);
    }
    if (!pending) return startVerdict(Kind::kGone);
    const std::string parking(invocation::kParkingConsumer);
    if (owner_[key] == parking) return startVerdict(Kind::kPending);
    if (owner_[key] != request.consumer) {
      verdict.kind = Kind::kElsewhere;
      verdict.owner = owner_[key];
      return verdict;
    }
    const std::string candidate_text = invocation::encodePlan(request.candidate);
    InMemoryFlow::Context ctx = flowContext(&verdict.flow);
    if (!hasPlan(key)) {
      state_[key][std::string(invocation::kPlanField)] = candidate_text;
      flow_.arrive(planOf(key), state_[key], key, ctx);
      const std::string limits = invocation::encodeLimits(request.candidate);
      if (!limits.empty()) state_[key][std::string(invocation::kLimitsField)] = limits;
    } else if (state_[key][std::string(invocation::kPlanField)] != candidate_text) {
      verdict.kind = Kind::kReplan;
      verdict.plan = planWithLimits(key);
      return verdict;
    }
    const invocation::Plan plan = planWithLimits(key);
    const std::int64_t born = bornOf(key);
    const invocation::ClaimTimes& times = request.times;
    const std::int64_t now = nowMs();
    std::optional<bool> takeover;
    ctx.may_expire = [&] {
      if (!takeover) takeover = observeClock(times);
      return *takeover;
    };
    // Every verdict from here on carries the flow notes gathered so far.
    const auto with = [&verdict](invocation::StartVerdict next) {
      next.flow = std::move(verdict.flow);
      return next;
    };
    std::vector<std::optional<invocation::Marker>> markers;
    for (std::size_t i = 0; i < plan.invocations.size(); ++i) {
      const auto& planned = plan.invocations[i];
      const std::string name = planned.field();
      if (state_[key].count(name) && !markerOf(key, name)) {
        return Error::internal("invocation state of " + name + " is corrupt");
      }
      std::optional<invocation::Marker> m = markerOf(key, name);
      if (m && m->held()) {
        if (m->token == request.token) return with(startVerdict(Kind::kRun, i, m->attempt));
        if (now < m->deadline_ms || !ctx.may_expire()) {
          return with(startVerdict(Kind::kBusy, i, m->attempt));
        }
        // Its worker is gone: an unstarted claim uncharged, a started one charged + backoff.
        flow_.giveBack(&planned.flow, name, m->token, ctx);
        if (m->state == State::kClaimed) {
          m = makeMarker(State::kFailed, m->attempt - 1, "-");
          m->next_attempt_ms = now;
        } else {
          state_[key][std::string(invocation::kReasonPrefix) + name] =
              "worker lost during attempt " + std::to_string(m->attempt);
          state_[key][std::string(invocation::kTailPrefix) + name] = "";
          if (m->attempt >= planned.max_attempts) {
            m = makeMarker(State::kExhausted, m->attempt, request.token);
          } else {
            const int lost = m->attempt;
            m = makeMarker(State::kFailed, lost, "-");
            m->next_attempt_ms = now + request.backoff.after(lost).count();
          }
        }
        state_[key][name] = m->format();
      }
      markers.push_back(m);
    }
    std::vector<std::string> parked_for;
    std::optional<std::int64_t> earliest;
    bool queued = false;
    const auto waitUntil = [&](std::int64_t at) {
      if (!earliest || at < *earliest) earliest = at;
    };
    for (std::size_t i = 0; i < plan.invocations.size(); ++i) {
      const auto& planned = plan.invocations[i];
      auto m = markers[i];
      std::optional<int> attempt;
      // docs/pipeline.md "Cancellation": what has not started does not start.
      if (auto dead = cancelRequest(key, planned);
          dead && !(m && (m->terminal() || m->held() || m->owesDlq()))) {
        m = endNow(key, planned.field(), State::kCancelled, m ? m->attempt : 0, request.token,
                   *dead, "cancelled");
      }
      if (!m) {
        attempt = 1;
      } else if (m->owesDlq()) {
        verdict.owed.emplace_back(i, m->attempt);
        verdict.owed_states.push_back(stateName(m->state));
      } else if (m->state == State::kFailed) {
        const auto gone = expiry(planned, born, m->attempt + 1);
        if (now < m->next_attempt_ms && gone && now >= gone->first) {
          attempt = m->attempt + 1;  // its deadline passed during the backoff: ended below
        } else if (now < m->next_attempt_ms) {
          waitUntil(gone && gone->first < m->next_attempt_ms ? gone->first : m->next_attempt_ms);
        } else if (m->attempt >= planned.max_attempts) {
          invocation::Marker exhausted = makeMarker(State::kExhausted, m->attempt, request.token);
          state_[key][planned.field()] = exhausted.format();
          verdict.owed.emplace_back(i, m->attempt);
          verdict.owed_states.push_back("exhausted");
        } else {
          attempt = m->attempt + 1;
        }
      }
      if (!attempt) continue;
      const auto gone = expiry(planned, born, *attempt);
      if (gone && now >= gone->first) {
        // docs/apps.md "Deadlines": no further attempt starts; dead-lettered with the reason.
        endNow(key, planned.field(), State::kExpired, *attempt - 1, request.token, false,
               gone->second);
        verdict.owed.emplace_back(i, *attempt - 1);
        verdict.owed_states.push_back("expired");
        continue;
      }
      const Runnability how =
          i < request.runnable.size() ? request.runnable[i] : Runnability::kNotHere;
      std::optional<InMemoryFlow::Gate> gate;
      if (!planned.flow.empty() && how != Runnability::kNotHere && !paused_.count(planned.app)) {
        gate = flow_.gate(planned, state_[key], key, *attempt, ctx);
      }
      if (paused_.count(planned.app)) {
        parked_for.push_back(planned.app);
        if (gone) waitUntil(gone->first);
      } else if (gate && gate->superseded) {
        // A newer event of its key replaced it before it ever ran: nothing is owed.
        invocation::Marker superseded = makeMarker(State::kSuperseded, 0, "");
        superseded.other = gate->by;
        state_[key][planned.field()] = superseded.format();
        state_[key].erase(std::string(invocation::kWaitPrefix) + planned.field());
        flow_.superseded(planned, key);
        ++stats_[planned.field() + ":superseded"];
        invocation::FlowNote note;
        note.kind = invocation::FlowNote::Kind::kSuperseded;
        note.index = i;
        note.other = gate->by;
        verdict.flow.push_back(note);
      } else if (gate) {
        flow_.wait(i, planned.field(), state_[key], gate->reason, gate->at, ctx);
        if (gate->at > 0) {
          waitUntil(gate->at);
        } else {
          queued = true;
        }
        if (gone) waitUntil(gone->first);  // its deadline ends the wait (docs/apps.md)
      } else if (how == Runnability::kReady) {
        const auto hold = std::min(planned.timeout + times.grace, times.lease) + times.margin;
        invocation::Marker claimed = makeMarker(State::kClaimed, *attempt, request.token);
        claimed.deadline_ms = now + hold.count();
        state_[key][planned.field()] = claimed.format();
        if (!planned.flow.empty()) {
          flow_.take(planned, state_[key], key, request.token, claimed.deadline_ms, now);
        }
        reindex(key);
        verdict = with(startVerdict(Kind::kRun, i, *attempt));
        if (request.started) {
          invocation::AttemptRecord record = *request.started;
          record.app = planned.app;
          record.handler = planned.handler;
          record.attempt = *attempt;
          verdict.journal_failed = !journalLocked(key, record);
        }
        return verdict;
      } else if (how == Runnability::kNeedsSlot) {
        reindex(key);
        return with(startVerdict(Kind::kSlot, i));
      } else {
        const std::int64_t elsewhere = now + request.retry_elsewhere.count();
        waitUntil(gone && gone->first < elsewhere ? gone->first : elsewhere);
      }
    }
    if (!earliest && parked_for.empty() && !queued) {
      reindex(key);
      verdict.kind = verdict.owed.empty() ? Kind::kDone : Kind::kOwesDlq;
      return verdict;
    }
    // Parked: held by the parking consumer, in the due index and the paused queue.
    if (earliest) {
      due_[key] = *earliest;
    } else {
      due_.erase(key);
    }
    for (const std::string& app : parked_for) paused_queue_.insert({app, key});
    owner_[key] = parking;
    verdict = with(startVerdict(Kind::kPending));
    verdict.until = earliest.value_or(0);
    verdict.paused = parked_for;
    return verdict;
  }

  Result<invocation::CompleteVerdict> completeLocked(const std::string& key,
                                                     const std::string& name,
                                                     const std::string& token,
                                                     const invocation::AttemptResult& result,
                                                     const invocation::DlqEntry* dlq,
                                                     const invocation::FlowControl* flow) {
    using Kind = invocation::CompleteVerdict::Kind;
    auto m = markerOf(key, name);
    if (m && m->token == token && !m->held()) {
      const Kind kind = m->state == State::kSucceeded   ? Kind::kSucceeded
                        : m->state == State::kCancelled ? Kind::kCancelled
                        : m->state == State::kFailed
                            ? (m->deferred ? Kind::kDeferred : Kind::kFailed)
                            : Kind::kExhausted;
      return invocation::CompleteVerdict{kind, m->dlq_written, isRetained(key)};
    }
    if (isRetained(key)) return invocation::CompleteVerdict{Kind::kRetained, false, true};
    if (!m || !m->held() || m->token != token) return invocation::CompleteVerdict{Kind::kStale};
    int max_attempts = 1;
    for (const auto& planned : planOf(key).invocations) {
      if (planned.field() == name) max_attempts = planned.max_attempts;
    }
    InMemoryFlow::Context ctx = flowContext();
    const int woke = flow_.giveBack(flow, name, token, ctx);
    invocation::CompleteVerdict verdict{Kind::kSucceeded};
    verdict.woke = woke;
    invocation::Marker next = makeMarker(State::kSucceeded, m->attempt, token);
    const std::string deferrals_field = std::string(invocation::kDeferralsPrefix) + name;
    const int deferrals =
        state_[key].count(deferrals_field) ? std::stoi(state_[key][deferrals_field]) : 0;
    std::optional<bool> cancel;
    for (const auto& planned : planOf(key).invocations) {
      if (planned.field() == name) cancel = cancelRequest(key, planned);
    }
    if (result.succeeded) {
      ++stats_[name + ":succeeded"];
    } else if (result.cancelled || cancel) {
      // docs/pipeline.md "Cancellation": never retried; dead-lettered only when asked.
      ++stats_[name + ":cancelled"];
      verdict.kind = Kind::kCancelled;
      next.state = State::kCancelled;
      next.dead_letter = cancel.value_or(false);
      state_[key][std::string(invocation::kReasonPrefix) + name] =
          result.cancelled ? "cancelled" : "cancelled (last attempt: " + result.exit_reason + ")";
      state_[key][std::string(invocation::kTailPrefix) + name] = result.output_tail;
    } else if (result.deferred && deferrals < result.max_deferrals) {
      // The handler asked to run again later (retry-after): not charged, up to the cap.
      ++stats_[name + ":retry_after"];
      state_[key][deferrals_field] = std::to_string(deferrals + 1);
      state_[key][std::string(invocation::kReasonPrefix) + name] = result.exit_reason;
      state_[key][std::string(invocation::kTailPrefix) + name] = result.output_tail;
      verdict.kind = Kind::kDeferred;
      next.state = State::kFailed;
      next.deferred = true;
      next.attempt = m->attempt - 1;
      next.next_attempt_ms = nowMs() + result.retry_after.count();
    } else {
      ++stats_[name + ":failed"];
      state_[key][std::string(invocation::kReasonPrefix) + name] = result.exit_reason;
      state_[key][std::string(invocation::kTailPrefix) + name] = result.output_tail;
      if (m->attempt >= max_attempts) {
        verdict.kind = Kind::kExhausted;
        next.state = State::kExhausted;
        bool others_terminal = true;
        for (const auto& planned : planOf(key).invocations) {
          auto other = markerOf(key, planned.field());
          if (planned.field() != name && (!other || !other->terminal())) others_terminal = false;
        }
        if (dlq && others_terminal) {
          addDlq(key, *dlq, name);
          next.dlq_written = verdict.dlq_written = true;
        }
      } else {
        verdict.kind = Kind::kFailed;
        next.state = State::kFailed;
        next.next_attempt_ms = nowMs() + result.retry_delay.count();
      }
    }
    state_[key][name] = next.format();
    if (resolved(key)) {
      ackAndRetain(key);
      verdict.acked = true;
    } else {
      reindex(key);
    }
    return verdict;
  }

  Result<invocation::DlqVerdict> writeDlqLocked(const std::string& key, const std::string& name,
                                                const invocation::DlqEntry& entry) {
    using Kind = invocation::DlqVerdict::Kind;
    invocation::DlqVerdict verdict;
    if (isRetained(key)) return dlqVerdict(Kind::kRetained, true);
    auto m = markerOf(key, name);
    if (name == invocation::kMalformedField) {
      if (hasPlan(key)) return dlqVerdict(Kind::kPlanned, false, planOf(key));
      if (!m) m = makeMarker(State::kExhausted, 0, "-");
    }
    if (!m || !(m->state == State::kExhausted || m->state == State::kExpired ||
                (m->state == State::kCancelled && m->dead_letter))) {
      return dlqVerdict(Kind::kStale);
    }
    verdict.kind = Kind::kExists;
    if (!m->dlq_written) {
      addDlq(key, entry, name);
      m->dlq_written = true;
      state_[key][name] = m->format();
      verdict.kind = Kind::kWritten;
    }
    if (resolved(key)) {
      ackAndRetain(key);
      verdict.acked = true;
    }
    return verdict;
  }

  Clock& clock_;
  std::chrono::milliseconds retention_;
  std::chrono::milliseconds key_promise_;
  mutable std::mutex mutex_;
  InMemoryFlow flow_{invocation::StreamKeys{"events", "relay"}};
  std::map<std::string, long long> stats_;  // `<app>/<handler>:<counter>`
  std::map<std::string, Hash> state_;
  std::map<std::string, Hash> journals_;
  std::map<std::string, long long> pel_;      // id -> delivery count
  std::map<std::string, std::string> owner_;  // id -> its consumer in the PEL
  std::set<std::string> paused_;
  std::set<std::pair<std::string, std::string>> paused_queue_;  // (app, id)
  std::optional<std::int64_t> clock_seen_;
  std::int64_t clock_resumed_ = 0;
  std::map<std::string, std::chrono::milliseconds> ttl_;
  std::map<std::string, std::int64_t> due_;
  std::vector<DlqFields> dlq_;
  std::set<std::string> lose_;
  std::set<std::string> renewed_;
  std::set<std::string> broken_journals_;
  std::set<std::string> published_;  // in the stream
  std::set<std::string> delivered_;  // read by the group at least once
  std::vector<std::tuple<std::string, std::string, std::string>> cancels_;
};

}  // namespace relay::testing
