#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "invocation/catalog.h"
#include "invocation/message.h"
#include "invocation/plan.h"
#include "runtime/runtime.h"

namespace relay::invocation {

/// One attempt as the observer sees it.
struct AttemptInfo {
  const Message& message;
  const PlannedInvocation& invocation;
  int attempt = 0;
};

/// Hooks for tracing, metrics or logging around the lifecycle (docs/pipeline.md "Observer").
/// Every hook is called on the thread that processes the message; the default does nothing.
/// Implementations must be thread-safe and must not block for long.
class LifecycleObserver {
 public:
  virtual ~LifecycleObserver() = default;
  /// A delivery is about to be processed.
  virtual void onMessage(const Message& message) { (void)message; }
  /// The local classification of the delivery (the recorded plan may still win).
  virtual void onClassified(const Message& message, const Classification& classification) {
    (void)message;
    (void)classification;
  }
  /// A handler is about to start; variables appended to `env` reach the handler (after the
  /// app's env, before Relay's RELAY_* variables, which win).
  virtual void onAttemptStart(const AttemptInfo& attempt,
                              std::vector<std::pair<std::string, std::string>>& env) {
    (void)attempt;
    (void)env;
  }
  /// The attempt ended: `outcome` is null when the runtime could not start it.
  virtual void onAttemptEnd(const AttemptInfo& attempt, const runtime::Outcome* outcome) {
    (void)attempt;
    (void)outcome;
  }
};

}  // namespace relay::invocation
