#include "tracing/tracing_observer.h"

#include <algorithm>
#include <chrono>

namespace relay::tracing {
namespace {

using invocation::Classification;

const char* classificationName(const Classification& classification) {
  switch (classification.kind) {
    case Classification::Kind::kPlan:
      if (classification.replay) return "replay";  // a replay copy (docs/replay.md "Copies")
      return !classification.plan.invocations.empty() &&
                     classification.plan.invocations.front().trigger == runtime::Trigger::kSchedule
                 ? "schedule"
                 : "matched";
    case Classification::Kind::kUnmatched:
      return "unmatched";
    case Classification::Kind::kObsolete:
      return "obsolete_schedule";
    case Classification::Kind::kMalformed:
      return "malformed";
    case Classification::Kind::kOversized:
      return "oversized";
    case Classification::Kind::kBadSchedule:
      return "bad_schedule";
    case Classification::Kind::kHold:
      return "hold";
  }
  return "unknown";
}

}  // namespace

TracingObserver::TracingObserver(Tracer& tracer, std::string stream, observability::Logger& logger)
    : tracer_(tracer), stream_(std::move(stream)), logger_(logger) {}

std::optional<TraceContext> TracingObserver::producerContext(const invocation::Message& message) {
  const std::string* traceparent = message.find("traceparent");
  if (traceparent == nullptr) return std::nullopt;
  Result<TraceContext> context = parseTraceparent(*traceparent);
  if (!context.ok()) {
    // Never a failed message: the delivery starts a new trace instead.
    logger_.debug("malformed traceparent ignored",
                  {{"message_id", message.id}, {"error", context.error().message}});
    return std::nullopt;
  }
  if (const std::string* tracestate = message.find("tracestate")) {
    if (Status checked = checkTracestate(*tracestate); checked.ok()) {
      context->tracestate = *tracestate;
    } else {
      logger_.debug("malformed tracestate ignored",
                    {{"message_id", message.id}, {"error", checked.error().message}});
    }
  }
  return std::move(context).value();
}

TracingObserver::InProgress* TracingObserver::current(const std::string& message_id) {
  std::lock_guard lock(mutex_);
  const auto found = threads_.find(std::this_thread::get_id());
  if (found == threads_.end() || found->second.message_id != message_id) return nullptr;
  return &found->second;
}

void TracingObserver::onMessage(const invocation::Message& message) {
  Span span = tracer_.startMessage(stream_, message.id, producerContext(message));
  std::lock_guard lock(mutex_);
  InProgress& slot = threads_[std::this_thread::get_id()];
  slot.attempt = Span();  // ends a span a previous delivery left open
  slot.message = std::move(span);
  slot.message_id = message.id;
}

void TracingObserver::onClassified(const invocation::Message& message,
                                   const Classification& classification) {
  InProgress* delivery = current(message.id);
  if (delivery == nullptr) return;
  delivery->message.set("relay.classification", classificationName(classification));
  delivery->message.set("relay.invocations",
                        static_cast<std::int64_t>(classification.plan.invocations.size()));
  if (!classification.reason.empty()) delivery->message.set("relay.reason", classification.reason);
  if (classification.replay) {
    delivery->message.set("relay.replay", classification.replay->replay);
    delivery->message.set("relay.original_id", classification.replay->original_id);
  }
  delivery->message.end();
}

void TracingObserver::onAttemptStart(const invocation::AttemptInfo& attempt,
                                     std::vector<std::pair<std::string, std::string>>& env) {
  InProgress* delivery = current(attempt.message.id);
  if (delivery == nullptr) return;
  delivery->attempt = tracer_.startAttempt(
      delivery->message, attempt.message.id, attempt.invocation.app, attempt.invocation.handler,
      attempt.attempt, runtime::triggerName(attempt.invocation.trigger));
  const TraceContext context = delivery->attempt.context();
  // Ours replace the app's own: the handler's spans must join this trace.
  std::erase_if(env, [](const auto& variable) {
    return variable.first == "TRACEPARENT" || variable.first == "TRACESTATE";
  });
  env.emplace_back("TRACEPARENT", context.traceparent());
  if (!context.tracestate.empty()) env.emplace_back("TRACESTATE", context.tracestate);
}

void TracingObserver::onAttemptEnd(const invocation::AttemptInfo& attempt,
                                   const runtime::Outcome* outcome) {
  InProgress* delivery = current(attempt.message.id);
  if (delivery == nullptr) return;
  Span& span = delivery->attempt;
  if (outcome == nullptr) {
    span.set("relay.outcome", "not_started");
  } else {
    // docs/pipeline.md "Cancellation": a stopped handler's span says so, not just "failed".
    span.set("relay.outcome", outcome->succeeded   ? "succeeded"
                              : outcome->cancelled ? "cancelled"
                                                   : "failed");
    span.set("relay.duration_ms",
             static_cast<std::int64_t>(
                 std::chrono::duration_cast<std::chrono::milliseconds>(outcome->duration).count()));
    if (!outcome->succeeded) span.fail(outcome->reason);
  }
  span.end();
}

}  // namespace relay::tracing
