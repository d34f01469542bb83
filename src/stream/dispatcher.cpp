#include "stream/dispatcher.h"

#include <utility>
#include <vector>

#include "common/duration.h"
#include "common/rfc3339.h"
#include "invocation/keys.h"
#include "runtime/child_process.h"
#include "stream/classifier.h"
#include "stream/invocation_spec.h"
#include "stream/schedule_admission.h"

namespace relay::stream {
namespace {

using invocation::Claim;
using invocation::Transition;
using observability::LogFields;

/// Handler output goes to the log verbatim, whatever the level.
class LogSink final : public runtime::OutputSink {
 public:
  explicit LogSink(observability::Logger& logger) : logger_(logger) {}
  void line(std::string_view prefixed_line) override { logger_.handlerOutput(prefixed_line); }

 private:
  observability::Logger& logger_;
};

std::string seconds(std::chrono::nanoseconds duration) {
  return std::to_string(std::chrono::duration<double>(duration).count()) + "s";
}

}  // namespace

struct Dispatcher::Invocation {
  enum class State { kUnresolved, kSucceeded, kOwesDlq, kDlqWritten, kStale };
  const app::AppEntry* app = nullptr;  // its registry entry, status included
  std::string handler;
  std::chrono::milliseconds timeout{};
  int retries = 0;
  runtime::Trigger trigger = runtime::Trigger::kEvent;
  std::string field;
  State state = State::kUnresolved;
  int attempt = 0;
  std::string reason;
};

Dispatcher::Dispatcher(DispatchSettings settings, invocation::InvocationStore& store,
                       const app::Registry& registry, runtime::Runtime& runtime,
                       ConcurrencyLimiter& limiter, observability::Metrics& metrics,
                       observability::Logger& logger, Clock& clock)
    : settings_(std::move(settings)),
      store_(store),
      registry_(registry),
      runtime_(runtime),
      limiter_(limiter),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      stats_(store.keys(), metrics),
      journal_(store.keys(), settings_.consumer, settings_.invocation_retention, metrics, clock) {}

Dispatcher::~Dispatcher() = default;

std::shared_ptr<const Classifier> Dispatcher::classifier() {
  std::shared_ptr<const app::Snapshot> snapshot = registry_.snapshot();
  std::lock_guard lock(classifier_mutex_);
  if (!classifier_ || &classifier_->snapshot() != snapshot.get()) {
    classifier_ = std::make_shared<const Classifier>(std::move(snapshot));
  }
  return classifier_;
}

Delivery Dispatcher::process(redis::Connection& redis, const StreamEntry& entry,
                             const std::atomic<bool>& stopping) {
  // Relay's own occurrences are not external events: no classification, no matching.
  if (entry.find(schedule::kEnvelopeField)) return processSchedule(redis, entry, stopping);
  const DecodedMessage decoded = decodeMessage(entry, settings_.max_event_bytes);
  if (decoded.kind != DecodedMessage::Kind::kEvent) {
    const bool oversized = decoded.kind == DecodedMessage::Kind::kOversized;
    return deadLetterMessage(
        redis, entry,
        {oversized ? invocation::kDlqKindOversized : invocation::kDlqKindMalformed, decoded.reason,
         decoded.dlq_event});
  }
  const std::shared_ptr<const Classifier> rules = classifier();
  const std::vector<Match> matches =
      rules->classify(*decoded.event, Instant::fromWallTime(clock_.now()));
  if (matches.empty()) {
    metrics_.countEvent("unmatched");
    logger_.debug("unmatched event acknowledged", {{"message_id", entry.id}});
    return acknowledge(redis, entry.id, /*has_state=*/false);
  }
  metrics_.countEvent("matched");
  std::vector<Invocation> invocations;
  invocations.reserve(matches.size());
  for (const Match& match : matches) {
    Invocation pending;
    pending.app = match.entry;
    pending.handler = match.rule->handler;
    pending.timeout = match.rule->timeout;
    pending.retries = match.rule->retries;
    pending.field = invocation::invocationField(match.entry->name, match.rule->handler);
    invocations.push_back(std::move(pending));
  }
  return runToTerminal(redis, entry, invocations, stopping);
}

Delivery Dispatcher::processSchedule(redis::Connection& redis, const StreamEntry& entry,
                                     const std::atomic<bool>& stopping) {
  // Held to the end: the admission points into it, and so do the invocation's app and names.
  const std::shared_ptr<const app::Snapshot> snapshot = registry_.snapshot();
  const ScheduleAdmission admission = admitSchedule(*snapshot, entry, settings_.max_event_bytes);
  LogFields fields = {{"message_id", entry.id}};
  if (admission.occurrence) {
    fields.emplace_back("app", admission.occurrence->app);
    fields.emplace_back("schedule", admission.occurrence->schedule);
    fields.emplace_back("scheduled_at", admission.occurrence->scheduledAtText());
  }
  switch (admission.verdict) {
    case ScheduleAdmission::Verdict::kObsolete:
      metrics_.countEvent("obsolete_schedule");
      fields.emplace_back("reason", admission.reason);
      logger_.info("obsolete schedule occurrence acknowledged", fields);
      return acknowledge(redis, entry.id, /*has_state=*/false);
    case ScheduleAdmission::Verdict::kMalformed: {
      Unrunnable what{invocation::kDlqKindSchedule, admission.reason, admission.dlq_event};
      if (admission.app) what.app = admission.app->name;
      if (admission.schedule) what.handler = admission.schedule->handler;
      return deadLetterMessage(redis, entry, what);
    }
    case ScheduleAdmission::Verdict::kRun:
      break;
  }
  metrics_.countEvent("schedule");
  logger_.debug("schedule occurrence admitted", fields);
  std::vector<Invocation> invocations(1);
  Invocation& occurrence = invocations.front();
  occurrence.app = admission.app;
  occurrence.handler = admission.schedule->handler;  // the CURRENT handler, resolved by name
  occurrence.timeout = admission.schedule->timeout;
  occurrence.retries = admission.schedule->retries;
  occurrence.trigger = runtime::Trigger::kSchedule;
  occurrence.field = invocation::invocationField(admission.app->name, occurrence.handler);
  return runToTerminal(redis, entry, invocations, stopping);
}

Delivery Dispatcher::runToTerminal(redis::Connection& redis, const StreamEntry& entry,
                                   std::vector<Invocation>& invocations,
                                   const std::atomic<bool>& stopping) {
  // Matching invocations of one message run one at a time, in dispatch order; one failing
  // does not stop the others.
  for (Invocation& invocation : invocations) {
    if (stopping.load()) break;
    if (!runInvocation(redis, entry, invocation)) return Delivery::kStale;
  }
  for (const Invocation& invocation : invocations) {
    if (invocation.state == Invocation::State::kUnresolved) return Delivery::kPending;
  }
  if (!writeOwedEntries(redis, entry, invocations)) return Delivery::kPending;
  return acknowledge(redis, entry.id, /*has_state=*/true);
}

bool Dispatcher::runInvocation(redis::Connection& redis, const StreamEntry& entry,
                               Invocation& invocation) {
  const app::AppEntry& app_entry = *invocation.app;
  const std::string& handler = invocation.handler;
  const LogFields fields = {
      {"message_id", entry.id}, {"app", app_entry.name}, {"handler", handler}};
  if (!app_entry.status.available) {
    // Never charged, never dead-lettered for unavailability alone: the message waits.
    metrics_.countInvocation(app_entry.name, handler, "unavailable");
    LogFields why = fields;
    why.emplace_back("reason", app_entry.status.reason);
    logger_.warn("app unavailable: message left pending", why);
    return true;
  }
  std::optional<ConcurrencyLimiter::Slot> slot =
      limiter_.acquire(app_entry.name, app_entry.app->concurrency, settings_.slot_wait);
  if (!slot) {
    metrics_.countInvocation(app_entry.name, handler, "blocked");
    logger_.info("no concurrency slot: message left pending", fields);
    return true;
  }
  const int max_attempts = invocation.retries + 1;
  const auto claim_for =
      invocation.timeout +
      std::chrono::duration_cast<std::chrono::milliseconds>(runtime::kKillGrace) +
      settings_.claim_margin;
  auto claim = store_.tryStart(redis, entry.id, invocation.field, max_attempts, claim_for);
  if (!claim.ok()) {
    // Fail closed: a replica may have won this claim; running now could duplicate it.
    metrics_.countRedisError("try_start");
    LogFields why = fields;
    why.emplace_back("error", claim.error().message);
    logger_.warn("claim failed: handler not run, message left pending", why);
    return true;
  }
  invocation.attempt = claim->attempt;
  switch (claim->verdict) {
    case Claim::Verdict::kRetained:
      invocation.state = Invocation::State::kStale;
      return false;
    case Claim::Verdict::kSucceeded:
      invocation.state = Invocation::State::kSucceeded;
      return true;
    case Claim::Verdict::kDlqWritten:
      invocation.state = Invocation::State::kDlqWritten;
      return true;
    case Claim::Verdict::kExhausted:
      invocation.state = Invocation::State::kOwesDlq;
      invocation.reason = "exhausted after " + std::to_string(claim->attempt) + " attempts";
      return true;
    case Claim::Verdict::kBusy:
    case Claim::Verdict::kWait:
      logger_.debug(claim->verdict == Claim::Verdict::kBusy ? "invocation running elsewhere"
                                                            : "retry not due yet",
                    fields);
      return true;
    case Claim::Verdict::kRun:
      break;
  }

  const std::string& input = entry.find("event") ? *entry.find("event") : std::string();
  const runtime::InvocationSpec spec =
      invocationSpec(*app_entry.app, handler, invocation.timeout, entry.id, claim->attempt,
                     invocation.trigger, input);
  LogSink sink(logger_);
  journal_.started(redis, entry.id, app_entry.name, handler, claim->attempt);
  metrics_.addInflight(1);
  const Result<runtime::Outcome> outcome = runtime_.run(spec, sink);
  metrics_.addInflight(-1);
  if (outcome.ok()) {
    journal_.finished(redis, entry.id, app_entry.name, handler, claim->attempt,
                      outcome->succeeded ? "succeeded" : "failed", outcome->reason,
                      outcome->duration);
  } else {
    journal_.finished(redis, entry.id, app_entry.name, handler, claim->attempt, "not_run",
                      outcome.error().message, {});
  }
  LogFields result = fields;
  result.emplace_back("attempt", std::to_string(claim->attempt));
  if (!outcome.ok()) {
    // The backend could not run it: give the attempt back.
    auto released = store_.release(redis, entry.id, invocation.field, claim->token);
    if (!released.ok()) metrics_.countRedisError("release");
    metrics_.countInvocation(app_entry.name, handler, "unavailable");
    result.emplace_back("reason", outcome.error().message);
    logger_.warn("runtime unavailable: attempt not counted, message left pending", result);
    return true;
  }
  metrics_.observeInvocationSeconds(std::chrono::duration<double>(outcome->duration).count());
  result.emplace_back("duration", seconds(outcome->duration));
  auto transition =
      store_.complete(redis, entry.id, invocation.field, claim->token, outcome->succeeded,
                      settings_.backoff.after(claim->attempt), max_attempts);
  // After the outcome is recorded: statistics never hold up or change the lifecycle.
  stats_.recordRun(redis, app_entry.name, handler, outcome->succeeded, outcome->duration);
  if (!transition.ok()) {
    // The attempt ran; its claim expires and a reclaim decides from the state what is next.
    metrics_.countRedisError("complete");
    result.emplace_back("error", transition.error().message);
    logger_.error("could not record the outcome: message left pending", result);
    return true;
  }
  switch (*transition) {
    case Transition::kSucceeded:
      invocation.state = Invocation::State::kSucceeded;
      metrics_.countInvocation(app_entry.name, handler, "succeeded");
      result.emplace_back("outcome", "succeeded");
      logger_.info("invocation succeeded", result);
      return true;
    case Transition::kFailed:
      metrics_.countInvocation(app_entry.name, handler, "failed");
      result.emplace_back("outcome", "failed");
      result.emplace_back("reason", outcome->reason);
      result.emplace_back("retry_in", formatDuration(settings_.backoff.after(claim->attempt)));
      logger_.warn("invocation failed: will retry", result);
      return true;
    case Transition::kExhausted:
      invocation.state = Invocation::State::kOwesDlq;
      invocation.reason = outcome->reason;
      metrics_.countInvocation(app_entry.name, handler, "exhausted");
      result.emplace_back("outcome", "exhausted");
      result.emplace_back("reason", outcome->reason);
      logger_.error("invocation exhausted its retries: dead-lettering", result);
      return true;
    case Transition::kRetained:
      invocation.state = Invocation::State::kStale;
      return false;
    default:
      logger_.warn("claim was taken over while the handler ran", result);
      return true;
  }
}

bool Dispatcher::writeOwedEntries(redis::Connection& redis, const StreamEntry& entry,
                                  std::vector<Invocation>& invocations) {
  long long deliveries = -1;
  for (Invocation& invocation : invocations) {
    if (invocation.state != Invocation::State::kOwesDlq) continue;
    if (deliveries < 0) deliveries = deliveryCount(redis, entry.id);
    invocation::DlqEntry dlq;
    dlq.original_stream = store_.keys().stream;
    dlq.original_id = entry.id;
    dlq.group = store_.keys().group;
    dlq.consumer = settings_.consumer;
    const std::string* raw = entry.find("event");
    dlq.event = raw ? *raw : std::string();
    dlq.reason = invocation.reason;
    dlq.kind = invocation::kDlqKindHandler;
    dlq.app = invocation.app->name;
    dlq.handler = invocation.handler;
    dlq.deliveries = deliveries;
    dlq.handler_attempts = invocation.attempt;
    dlq.timestamp = formatRfc3339Millis(clock_.now());
    auto written = store_.writeDlq(redis, entry.id, invocation.field, dlq);
    if (!written.ok() || (*written != Transition::kWritten && *written != Transition::kExists)) {
      // The message stays pending and the invocation is re-reported on redelivery.
      metrics_.countRedisError("dlq_write");
      logger_.error("dead-letter write failed: message left pending",
                    {{"message_id", entry.id},
                     {"app", dlq.app},
                     {"handler", dlq.handler},
                     {"error", written.ok() ? "state changed" : written.error().message}});
      return false;
    }
    if (*written == Transition::kWritten) {
      metrics_.countDlqEntry("handler");
      stats_.recordDeadLetter(redis, dlq.app, dlq.handler);
    }
    invocation.state = Invocation::State::kDlqWritten;
  }
  return true;
}

Delivery Dispatcher::deadLetterMessage(redis::Connection& redis, const StreamEntry& entry,
                                       const Unrunnable& what) {
  const bool oversized = what.kind == invocation::kDlqKindOversized;
  metrics_.countEvent(oversized ? "oversized" : "malformed");
  invocation::DlqEntry dlq;
  dlq.original_stream = store_.keys().stream;
  dlq.original_id = entry.id;
  dlq.group = store_.keys().group;
  dlq.consumer = settings_.consumer;
  dlq.event = what.event;
  dlq.reason = what.reason;
  dlq.kind = what.kind;
  dlq.app = what.app;
  dlq.handler = what.handler;
  dlq.deliveries = deliveryCount(redis, entry.id);
  dlq.handler_attempts = 0;
  dlq.timestamp = formatRfc3339Millis(clock_.now());
  auto written = store_.writeDlq(redis, entry.id, std::string(invocation::kMalformedField), dlq);
  if (!written.ok() || *written == Transition::kStale) {
    metrics_.countRedisError("dlq_write");
    logger_.error("dead-letter write failed: message left pending",
                  {{"message_id", entry.id},
                   {"error", written.ok() ? "state changed" : written.error().message}});
    return Delivery::kPending;
  }
  if (*written == Transition::kRetained) return Delivery::kStale;
  if (*written == Transition::kWritten) {
    metrics_.countDlqEntry(what.kind);
    stats_.recordDeadLetter(redis, dlq.app, dlq.handler);
  }
  logger_.warn(
      std::string(what.kind == invocation::kDlqKindSchedule ? "malformed schedule occurrence"
                  : oversized                               ? "oversized message"
                                                            : "malformed message") +
          " dead-lettered",
      {{"message_id", entry.id},
       {"app", what.app},
       {"handler", what.handler},
       {"reason", what.reason}});
  return acknowledge(redis, entry.id, /*has_state=*/true);
}

Delivery Dispatcher::acknowledge(redis::Connection& redis, const std::string& id, bool has_state) {
  if (!has_state) {
    auto acked = redis.command({"XACK", store_.keys().stream, store_.keys().group, id});
    if (!acked.ok()) {
      metrics_.countRedisError("xack");
      return Delivery::kPending;
    }
    return Delivery::kAcked;
  }
  auto acked = store_.ackAndRetain(redis, id, settings_.invocation_retention);
  if (!acked.ok()) {
    metrics_.countRedisError("xack");
    logger_.warn("acknowledge failed: message left pending",
                 {{"message_id", id}, {"error", acked.error().message}});
    return Delivery::kPending;
  }
  return Delivery::kAcked;
}

long long Dispatcher::deliveryCount(redis::Connection& redis, const std::string& id) {
  auto pending =
      redis.command({"XPENDING", store_.keys().stream, store_.keys().group, id, id, "1"});
  if (!pending.ok()) return 0;
  auto first = pending->at(0);
  if (!first.ok()) return 0;
  auto count = first->at(3);
  if (!count.ok()) return 0;
  auto value = count->integer();
  return value.ok() ? *value : 0;
}

}  // namespace relay::stream
