#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "invocation/lifecycle_observer.h"
#include "observability/logger.h"
#include "tracing/tracer.h"

namespace relay::tracing {

/// The lifecycle's hooks as spans (docs/tracing.md): a `receive` span per delivery from
/// onMessage to onClassified, continuing the entry's `traceparent`; an `invoke` span per
/// attempt under it; TRACEPARENT/TRACESTATE for the handler. A malformed traceparent is
/// ignored with a debug log. The hooks of one delivery come on one thread, one after another,
/// so the spans in progress are kept per thread. Thread-safe.
class TracingObserver final : public invocation::LifecycleObserver {
 public:
  TracingObserver(Tracer& tracer, std::string stream, observability::Logger& logger);

  void onMessage(const invocation::Message& message) override;
  void onClassified(const invocation::Message& message,
                    const invocation::Classification& classification) override;
  void onAttemptStart(const invocation::AttemptInfo& attempt,
                      std::vector<std::pair<std::string, std::string>>& env) override;
  void onAttemptEnd(const invocation::AttemptInfo& attempt,
                    const runtime::Outcome* outcome) override;

 private:
  /// The spans of the delivery a thread is processing.
  struct InProgress {
    std::string message_id;
    Span message;  // ended at classification; still the parent of the attempts
    Span attempt;
  };
  /// This thread's delivery, if it is `message_id`'s.
  InProgress* current(const std::string& message_id);
  std::optional<TraceContext> producerContext(const invocation::Message& message);

  Tracer& tracer_;
  std::string stream_;
  observability::Logger& logger_;
  std::mutex mutex_;
  std::unordered_map<std::thread::id, InProgress> threads_;  // one entry per processing thread
};

}  // namespace relay::tracing
