#include "invocation/lifecycle.h"

#include <map>
#include <optional>
#include <utility>

#include "common/duration.h"
#include "common/rfc3339.h"
#include "invocation/retry_after.h"
#include "runtime/output_lines.h"

namespace relay::invocation {
namespace {

using observability::LogFields;

std::string seconds(std::chrono::nanoseconds duration) {
  return std::to_string(std::chrono::duration<double>(duration).count()) + "s";
}

}  // namespace

Lifecycle::Lifecycle(LifecycleSettings settings, Catalog& catalog, runtime::Runtime& runtime,
                     ConcurrencyLimiter& limiter, ClaimRenewer* renewer,
                     LifecycleObserver& observer, observability::Metrics& metrics,
                     observability::Logger& logger, Clock& clock, Random& random,
                     RunningAttempts* running)
    : settings_(std::move(settings)),
      catalog_(catalog),
      runtime_(runtime),
      limiter_(limiter),
      renewer_(renewer),
      observer_(observer),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      random_(random),
      running_(running) {}

Delivery Lifecycle::process(LifecycleStore& store, const Message& message,
                            const std::atomic<bool>& stopping, const Classification* classified) {
  observer_.onMessage(message);
  const Classification what = classified ? *classified : catalog_.classify(message, clock_.now());
  observer_.onClassified(message, what);
  switch (what.kind) {
    case Classification::Kind::kHold:
      logger_.warn("message cannot be classified now: left pending",
                   {{"message_id", message.id}, {"reason", what.reason}});
      return Delivery::kPending;
    case Classification::Kind::kMalformed:
    case Classification::Kind::kOversized:
    case Classification::Kind::kBadSchedule:
    case Classification::Kind::kUnmatched:
    case Classification::Kind::kObsolete:
      return settleUnowed(store, message, what, stopping);
    case Classification::Kind::kPlan:
      break;
  }
  const bool schedule = !what.plan.invocations.empty() &&
                        what.plan.invocations.front().trigger == runtime::Trigger::kSchedule;
  metrics_.countEvent(schedule ? "schedule" : what.replay ? "replay" : "matched");
  return runPlan(store, message, what.plan, stopping, what.replay ? &*what.replay : nullptr);
}

Delivery Lifecycle::runPlan(LifecycleStore& store, const Message& message, Plan plan,
                            const std::atomic<bool>& stopping, const ReplayOrigin* replay) {
  bool replanned = false;
  // The concurrency slots this delivery holds, per app: taken before a claim, so a claim is
  // only ever taken for a handler about to start (docs/pipeline.md "Claims").
  std::map<std::string, ConcurrencyLimiter::Slot> slots;
  std::string waited_for;  // the app whose slot this delivery already waited for
  // Each round runs at most one attempt or waits once for a slot, and each attempt changes the
  // state, so a message is done after a bounded number of rounds; the bound only guards
  // against a misbehaving store.
  const std::size_t rounds = 3 * plan.invocations.size() + 4;
  for (std::size_t round = 0; round < rounds; ++round) {
    if (stopping.load()) return Delivery::kPending;
    StartRequest request;
    std::vector<Runnable> runnables;
    for (const PlannedInvocation& planned : plan.invocations) {
      runnables.push_back(catalog_.resolve(planned));
      const Runnable& runnable = runnables.back();
      Runnability how = Runnability::kNotHere;
      if (runnable.known && runnable.available) {
        if (!slots.count(planned.app)) {
          if (auto slot = limiter_.tryAcquire(planned.app, runnable.concurrency)) {
            slots.emplace(planned.app, std::move(*slot));
          }
        }
        how = slots.count(planned.app) ? Runnability::kReady : Runnability::kNeedsSlot;
      }
      request.runnable.push_back(how);
    }
    request.candidate = plan;
    request.token = random_.token();
    request.consumer = settings_.consumer;
    request.times = settings_.claim;
    request.backoff = settings_.backoff;
    request.retry_elsewhere = settings_.retry_elsewhere;
    // The attempt journal's record of the attempt this call may claim (docs/pipeline.md "State
    // in Redis"), kept by the claim itself: no round trip of its own.
    AttemptRecord started;
    started.consumer = settings_.consumer;
    started.started_ms = unixMillis(clock_.now());
    request.started = started;
    auto verdict = store.start(message.id, request);
    if (!verdict.ok()) {
      // Fail closed: a replica may have won this claim; running now could duplicate it. If the
      // script ran and only its reply was lost, this token may hold a claim: give it back.
      metrics_.countRedisError("try_start");
      logger_.warn("claim failed: handler not run, message left pending",
                   {{"message_id", message.id}, {"error", verdict.error().message}});
      // Whichever invocation the token may hold, with the key slots it may hold.
      for (const PlannedInvocation& planned : plan.invocations) {
        if (planned.flow.key) release(store, message, &planned, request.token, true);
      }
      release(store, message, nullptr, request.token, /*unjournal=*/true);
      return Delivery::kPending;
    }
    if (verdict->journal_failed) metrics_.countRedisError("journal");
    if (!verdict->flow.empty()) noteFlow(message, plan, verdict->flow);
    switch (verdict->kind) {
      case StartVerdict::Kind::kReplan:
        if (replanned) return Delivery::kPending;
        replanned = true;
        logger_.info("message owes its recorded plan: not classified again",
                     {{"message_id", message.id}});
        plan = std::move(verdict->plan);
        continue;
      case StartVerdict::Kind::kRetained:
        return Delivery::kStale;
      case StartVerdict::Kind::kGone:
        // Acknowledged by a replica meanwhile (say by other rules, before this worker recorded
        // its plan): what it decided stands, and nothing runs here (docs/pipeline.md "Waiting").
        logger_.info("message acknowledged elsewhere while it waited here: not run",
                     {{"message_id", message.id}});
        return Delivery::kStale;
      case StartVerdict::Kind::kElsewhere:
        logger_.info("message taken over by another consumer while it waited here: not run",
                     {{"message_id", message.id}, {"owner", verdict->owner}});
        return Delivery::kStale;
      case StartVerdict::Kind::kBusy:
        logger_.debug("an invocation of this message runs elsewhere: left pending",
                      {{"message_id", message.id}});
        return Delivery::kPending;
      case StartVerdict::Kind::kSlot: {
        // The next invocation is runnable here, but its app's slots are taken: wait for one
        // (bounded), then claim it. Nothing is claimed while waiting.
        const PlannedInvocation& planned = plan.invocations.at(verdict->index);
        if (waited_for == planned.app) return Delivery::kPending;
        waited_for = planned.app;
        slots.clear();
        auto slot = limiter_.acquire(planned.app, runnables.at(verdict->index).concurrency,
                                     settings_.slot_wait, &stopping);
        if (!slot) {
          metrics_.countInvocation(planned.app, planned.handler, "blocked");
          logger_.info(
              "no concurrency slot: message left pending, nothing claimed",
              {{"message_id", message.id}, {"app", planned.app}, {"handler", planned.handler}});
          return Delivery::kPending;
        }
        slots.emplace(planned.app, std::move(*slot));
        continue;
      }
      case StartVerdict::Kind::kPending:
        logParked(message, plan, runnables, request.runnable, *verdict);
        // Parked until `until`, which may come before the due poller's next look: a throttle's
        // turn, a debounce's end, a turn re-reserved after the poller took the message (its
        // index entry then said "a lease away").
        if (verdict->until > 0 && wake_) wake_(verdict->until);
        return Delivery::kPending;
      case StartVerdict::Kind::kDone: {
        auto acked = store.acknowledge(message.id);
        if (!acked.ok()) metrics_.countRedisError("xack");
        if (!acked.ok() || acked->kind == AckVerdict::Kind::kUnresolved) return Delivery::kPending;
        return Delivery::kAcked;
      }
      case StartVerdict::Kind::kOwesDlq:
        return writeOwed(store, message, plan, *verdict, replay);
      case StartVerdict::Kind::kRun:
        break;
    }
    const PlannedInvocation& planned = plan.invocations.at(verdict->index);
    auto slot = slots.find(planned.app);
    if (slot == slots.end()) {
      // Claimed only with kReady, which is only ever given with a slot held.
      release(store, message, &planned, request.token, /*unjournal=*/true);
      return Delivery::kPending;
    }
    ConcurrencyLimiter::Slot held = std::move(slot->second);
    slots.clear();  // the other apps' slots go back before the handler runs
    waited_for.clear();
    const Step step =
        runAttempt(store, message, planned, runnables.at(verdict->index), verdict->attempt,
                   request.token, started.started_ms, stopping, replay);
    if (step == Step::kAcked) return Delivery::kAcked;
    if (step == Step::kStale) return Delivery::kStale;
    if (step == Step::kStop) return Delivery::kPending;
  }
  return Delivery::kPending;
}

void Lifecycle::noteFlow(const Message& message, const Plan& plan,
                         const std::vector<FlowNote>& notes) {
  for (const FlowNote& note : notes) {
    if (note.index >= plan.invocations.size()) continue;
    const PlannedInvocation& planned = plan.invocations[note.index];
    LogFields fields = {
        {"message_id", message.id}, {"app", planned.app}, {"handler", planned.handler}};
    switch (note.kind) {
      case FlowNote::Kind::kDeferred:
        metrics_.countInvocation(planned.app, planned.handler, "deferred");
        fields.emplace_back("reason", note.reason);
        if (note.at > 0) {
          fields.emplace_back("until",
                              formatRfc3339Millis(WallTime(std::chrono::milliseconds(note.at))));
        }
        logger_.debug("flow control: invocation deferred", fields);
        break;
      case FlowNote::Kind::kDeduplicated:
        metrics_.countInvocation(planned.app, planned.handler, "deduplicated");
        fields.emplace_back("first", note.other);
        logger_.info("flow control: duplicate event, invocation not run", fields);
        break;
      case FlowNote::Kind::kSuperseded:
        metrics_.countInvocation(planned.app, planned.handler, "superseded");
        fields.emplace_back("by", note.other);
        logger_.info("flow control: invocation superseded by a newer event", fields);
        break;
    }
  }
}

void Lifecycle::logParked(const Message& message, const Plan& plan,
                          const std::vector<Runnable>& runnables,
                          const std::vector<Runnability>& runnable, const StartVerdict& verdict) {
  for (const std::string& app : verdict.paused) {
    logger_.debug("app paused: message parked until it is resumed",
                  {{"message_id", message.id}, {"app", app}});
  }
  for (std::size_t i = 0; i < plan.invocations.size(); ++i) {
    if (runnable[i] != Runnability::kNotHere) continue;
    // Never charged, never dead-lettered for unavailability alone: the message waits.
    const PlannedInvocation& planned = plan.invocations[i];
    metrics_.countInvocation(planned.app, planned.handler, "unavailable");
    logger_.warn("app unavailable here: message parked for another worker or a later try",
                 {{"message_id", message.id},
                  {"app", planned.app},
                  {"handler", planned.handler},
                  {"reason", runnables[i].reason}});
  }
}

Delivery Lifecycle::writeOwed(LifecycleStore& store, const Message& message, const Plan& plan,
                              const StartVerdict& verdict, const ReplayOrigin* replay) {
  for (std::size_t n = 0; n < verdict.owed.size(); ++n) {
    const auto& [index, attempts] = verdict.owed[n];
    const std::string why = n < verdict.owed_states.size() ? verdict.owed_states[n] : "exhausted";
    const PlannedInvocation& planned = plan.invocations.at(index);
    // The store puts the recorded reason in (`deadline 1h`, `cancelled`, the last exit).
    const DlqEntry entry =
        dlqEntry(message, DlqKind::kHandler, planned.app, planned.handler,
                 why + " after " + std::to_string(attempts) + " attempts", attempts, replay);
    auto written = store.writeDlq(message.id, planned.field(), entry);
    if (!written.ok() || written->kind == DlqVerdict::Kind::kStale) {
      // The message stays pending and the invocation is re-reported on redelivery.
      metrics_.countRedisError("dlq_write");
      logger_.error("dead-letter write failed: message left pending",
                    {{"message_id", message.id},
                     {"app", planned.app},
                     {"handler", planned.handler},
                     {"error", written.ok() ? "state changed" : written.error().message}});
      return Delivery::kPending;
    }
    for (int i = 0; i < written->stats_failures; ++i) metrics_.countRedisError("stats");
    if (written->kind == DlqVerdict::Kind::kRetained) return Delivery::kStale;
    if (written->kind == DlqVerdict::Kind::kWritten) {
      metrics_.countDlqEntry(kindName(DlqKind::kHandler));
      LogFields fields = {{"message_id", message.id},
                          {"app", planned.app},
                          {"handler", planned.handler},
                          {"attempts", std::to_string(attempts)},
                          {"outcome", why}};
      if (replay) fields.emplace_back("replay", replay->replay);
      if (why != "exhausted") {
        // Counted here: no attempt ended this way (docs/apps.md "Deadlines", pipeline.md
        // "Cancellation").
        metrics_.countInvocation(planned.app, planned.handler, why);
      }
      logger_.error(why == "expired"     ? "invocation's deadline passed: dead-lettered"
                    : why == "cancelled" ? "invocation cancelled: dead-lettered as asked"
                                         : "invocation dead-lettered",
                    fields);
    }
    if (written->acked) return Delivery::kAcked;
  }
  return Delivery::kPending;
}

void Lifecycle::release(LifecycleStore& store, const Message& message,
                        const PlannedInvocation* planned, const std::string& token,
                        bool unjournal) {
  // Without an invocation: whichever the token holds (start()'s reply was lost).
  const std::string field = planned ? planned->field() : std::string();
  const FlowControl* flow = planned ? &planned->flow : nullptr;
  auto released = store.release(message.id, field, token, settings_.release_retry, unjournal, flow);
  if (released.ok()) return;
  metrics_.countRedisError("release");
  logger_.warn("releasing an unstarted claim failed: repeated until it is done",
               {{"message_id", message.id}, {"error", released.error().message}});
  // Left alone, the claim would expire: uncharged (it never began), but busy until then.
  if (!renewer_) return;
  const std::chrono::milliseconds retry_after = settings_.release_retry;
  renewer_->retryLater("release " + message.id,
                       [id = message.id, field, token, retry_after, unjournal,
                        held = planned ? planned->flow : FlowControl{}](LifecycleStore& owner) {
                         return owner.release(id, field, token, retry_after, unjournal, &held).ok();
                       });
}

void Lifecycle::journal(LifecycleStore& store, const Message& message,
                        const AttemptRecord& record) {
  // For the console only: a failed write changes nothing else.
  if (!store.journal(message.id, record).ok()) metrics_.countRedisError("journal");
}

Lifecycle::Step Lifecycle::runAttempt(LifecycleStore& store, const Message& message,
                                      const PlannedInvocation& planned, const Runnable& runnable,
                                      int attempt, const std::string& token,
                                      std::int64_t claimed_ms, const std::atomic<bool>& stopping,
                                      const ReplayOrigin* replay) {
  const std::string field = planned.field();
  LogFields fields = {{"message_id", message.id},
                      {"app", planned.app},
                      {"handler", planned.handler},
                      {"attempt", std::to_string(attempt)}};
  if (replay) fields.emplace_back("replay", replay->replay);
  if (stopping.load()) {
    release(store, message, &planned, token, /*unjournal=*/true);
    return Step::kStop;
  }
  // docs/pipeline.md "Cancellation": a cancel read from Redis stops this attempt here.
  std::optional<RunningAttempts::Handle> cancellable;
  if (running_) cancellable.emplace(running_->add(message.id, field, token));
  if (cancellable && cancellable->signal().requested()) {
    // Cancelled between the claim and now: nothing runs, nothing is charged; the next start
    // finds the request and records the cancellation.
    release(store, message, &planned, token, /*unjournal=*/true);
    logger_.info("invocation cancelled before its handler started", fields);
    return Step::kContinue;
  }
  runtime::InvocationSpec spec = runnable.spec;
  spec.message_id = message.id;
  spec.attempt = attempt;
  spec.trigger = planned.trigger;
  spec.timeout = planned.timeout;
  if (cancellable) spec.cancel = &cancellable->signal();
  if (replay) {
    // docs/replay.md "Copies": a dead letter replayed keeps its invocation's idempotency key.
    if (!replay->dlq_id.empty()) spec.message_id = replay->original_id;
    spec.app_env.emplace_back("RELAY_REPLAY_ID", replay->replay);
    spec.app_env.emplace_back("RELAY_ORIGINAL_MESSAGE_ID", replay->original_id);
  }
  const std::string* input = message.find("event");
  spec.input = input ? std::string_view(*input) : std::string_view();
  const AttemptInfo info{message, planned, attempt};
  observer_.onAttemptStart(info, spec.app_env);
  OutputTail output(logger_, settings_.output_tail);
  output.watchRetryAfter(runtime::outputPrefix(spec));
  std::optional<ClaimRenewer::Tracked> renewing;
  if (renewer_) {
    renewing.emplace(renewer_->track(
        {message.id, field, token, clock_.monotonicNow() + planned.timeout + settings_.claim.grace,
         planned.flow}));
  }
  // From the moment the runtime says the handler started, the attempt counts even if this
  // worker dies: the claim becomes `running` (docs/pipeline.md "Claims").
  output.onStarted([&] {
    if (renewing)
      renewing->renewUntil(clock_.monotonicNow() + planned.timeout + settings_.claim.grace);
    auto begun = store.begin(message.id, field, token);
    if (!begun.ok()) {
      // The handler runs anyway; complete() accepts the `claimed` marker. Only a worker that
      // dies before recording the outcome leaves the attempt uncounted (at-least-once).
      metrics_.countRedisError("begin");
      logger_.warn(
          "could not mark the claim started",
          {{"message_id", message.id}, {"invocation", field}, {"error", begun.error().message}});
    }
  });
  // start() kept the attempt's journal record; the outcome replaces it.
  AttemptRecord record;
  record.app = planned.app;
  record.handler = planned.handler;
  record.attempt = attempt;
  record.consumer = settings_.consumer;
  record.started_ms = claimed_ms;
  metrics_.addInflight(1);
  const Result<runtime::Outcome> outcome = runtime_.run(spec, output);
  metrics_.addInflight(-1);
  observer_.onAttemptEnd(info, outcome.ok() ? &*outcome : nullptr);
  record.finished_ms = unixMillis(clock_.now());
  record.outcome = !outcome.ok() ? "not_run" : outcome->succeeded ? "succeeded" : "failed";
  record.reason = outcome.ok() ? outcome->reason : outcome.error().message;
  if (outcome.ok()) {
    record.duration_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(outcome->duration).count();
    record.started_ms = record.finished_ms - record.duration_ms;
  }
  if (!outcome.ok()) {
    renewing.reset();
    // The handler never started (docs/runtimes.md): give the attempt back, its record saying so.
    journal(store, message, record);
    release(store, message, &planned, token, /*unjournal=*/false);
    metrics_.countInvocation(planned.app, planned.handler, "unavailable");
    fields.emplace_back("reason", outcome.error().message);
    logger_.warn("runtime could not start the handler: attempt not counted, message left pending",
                 fields);
    return Step::kStop;
  }
  metrics_.observeInvocationSeconds(std::chrono::duration<double>(outcome->duration).count());
  fields.emplace_back("duration", seconds(outcome->duration));
  AttemptResult result;
  result.succeeded = outcome->succeeded;
  result.cancelled = outcome->cancelled;
  result.exit_reason = outcome->reason;
  result.duration = outcome->duration;
  result.retry_delay = settings_.backoff.after(attempt);
  // docs/runtimes.md "Retry-after": exit 75 asks to be run again later, uncharged (up to a cap).
  if (outcome->exit_code == kRetryAfterExitCode) {
    result.deferred = true;
    result.retry_after = std::min(output.retryAfter().value_or(settings_.retry_after_default),
                                  settings_.retry_after_max);
    result.max_deferrals = settings_.max_deferrals;
  }
  std::optional<DlqEntry> dlq;
  if (!outcome->succeeded) {
    result.output_tail = output.text();
    if (attempt >= planned.max_attempts && !outcome->cancelled) {
      dlq = dlqEntry(message, DlqKind::kHandler, planned.app, planned.handler, outcome->reason,
                     attempt, replay);
      dlq->exit_reason = outcome->reason;
      dlq->output_tail = result.output_tail;
    }
  }
  auto recorded = store.complete(message.id, field, token, result, dlq ? &*dlq : nullptr, &record,
                                 &planned.flow);
  if (!recorded.ok()) {
    // The attempt ran and is charged whatever happens; its outcome is recorded when Redis
    // answers again, however long that takes (the call is idempotent), its claim renewed
    // meanwhile (docs/pipeline.md "Outages"). Only this worker's death loses it.
    metrics_.countRedisError("complete");
    fields.emplace_back("error", recorded.error().message);
    logger_.error("could not record the outcome yet: repeated until Redis answers", fields);
    if (renewer_) {
      renewer_->retryLater(
          "complete " + message.id + " " + field,
          [id = message.id, field, token, result, dlq, record,
           flow = planned.flow](LifecycleStore& owner) {
            return owner.complete(id, field, token, result, dlq ? &*dlq : nullptr, &record, &flow)
                .ok();
          },
          std::move(renewing));
    }
    return Step::kStop;
  }
  renewing.reset();
  for (int i = 0; i < recorded->stats_failures; ++i) metrics_.countRedisError("stats");
  if (recorded->journal_failed) metrics_.countRedisError("journal");
  if (recorded->woke > 0 && wake_) wake_(0);
  switch (recorded->kind) {
    case CompleteVerdict::Kind::kSucceeded:
      metrics_.countInvocation(planned.app, planned.handler, "succeeded");
      fields.emplace_back("outcome", "succeeded");
      logger_.info("invocation succeeded", fields);
      break;
    case CompleteVerdict::Kind::kFailed:
      metrics_.countInvocation(planned.app, planned.handler, "failed");
      fields.emplace_back("outcome", "failed");
      fields.emplace_back("reason", outcome->reason);
      fields.emplace_back("retry_in", formatDuration(result.retry_delay));
      logger_.warn("invocation failed: will retry", fields);
      break;
    case CompleteVerdict::Kind::kExhausted:
      metrics_.countInvocation(planned.app, planned.handler, "exhausted");
      fields.emplace_back("outcome", "exhausted");
      fields.emplace_back("reason", outcome->reason);
      if (recorded->dlq_written) {
        metrics_.countDlqEntry(kindName(DlqKind::kHandler));
        logger_.error("invocation exhausted its retries: dead-lettered", fields);
      } else {
        // Written once the message's other invocations are terminal, or on a redelivery if
        // the DLQ could not be written: the message stays pending until it is.
        logger_.error("invocation exhausted its retries: dead-letter entry owed", fields);
      }
      break;
    case CompleteVerdict::Kind::kDeferred:
      metrics_.countInvocation(planned.app, planned.handler, "retry_after");
      fields.emplace_back("outcome", "retry_after");
      fields.emplace_back("retry_in", formatDuration(result.retry_after));
      logger_.info("handler asked to run again later: attempt not counted", fields);
      break;
    case CompleteVerdict::Kind::kCancelled:
      metrics_.countInvocation(planned.app, planned.handler, "cancelled");
      fields.emplace_back("outcome", "cancelled");
      fields.emplace_back("reason", outcome->reason);
      logger_.warn("invocation cancelled: not retried", fields);
      break;
    case CompleteVerdict::Kind::kStale:
      logger_.warn("claim was taken over while the handler ran", fields);
      return Step::kStop;
    case CompleteVerdict::Kind::kRetained:
      return Step::kStale;
  }
  return recorded->acked ? Step::kAcked : Step::kContinue;
}

DlqEntry Lifecycle::dlqEntry(const Message& message, DlqKind kind, std::string app,
                             std::string handler, std::string reason, int attempts,
                             const ReplayOrigin* replay) const {
  DlqEntry entry;
  entry.original_stream = settings_.keys.stream;
  entry.original_id = message.id;
  entry.group = settings_.keys.group;
  entry.consumer = settings_.consumer;
  const std::string* raw = message.find("event");
  entry.event = raw ? *raw : std::string();
  entry.reason = std::move(reason);
  entry.kind = kind;
  entry.app = std::move(app);
  entry.handler = std::move(handler);
  entry.handler_attempts = attempts;
  entry.timestamp = formatRfc3339Millis(clock_.now());
  if (replay) {
    entry.replay = replay->replay;
    entry.replay_of = replay->original_id;
  }
  return entry;
}

}  // namespace relay::invocation
