#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "invocation/flow.h"
#include "runtime/runtime.h"

namespace relay::invocation {

/// One invocation a message owes: which handler, with how many attempts and which timeout. Fixed
/// at the message's first classification (docs/pipeline.md "One message", step 3).
struct PlannedInvocation {
  std::string app;
  std::string handler;
  int max_attempts = 1;  // the rule's retries + 1
  std::chrono::milliseconds timeout{30'000};
  runtime::Trigger trigger = runtime::Trigger::kEvent;  // kEvent, kSchedule or kReplay
  FlowControl flow{};  // its gates (flow.h), with the key values its event gave
  /// docs/apps.md "Deadlines": counted from the message's publication (the time of its id,
  /// Redis's clock), after `deadline` no attempt starts, after `start_timeout` no first
  /// attempt; 0: none. Recorded beside the plan (`relay:limits`), never in its lines.
  std::chrono::milliseconds deadline{0};
  std::chrono::milliseconds start_timeout{0};

  /// The state-hash field: `<app>/<handler>`.
  std::string field() const;
  bool operator==(const PlannedInvocation&) const = default;
};

/// The invocations of one message in dispatch order (apps by name, rules in declaration order;
/// a schedule occurrence has one). Recorded in the state hash's `relay:plan` field.
struct Plan {
  std::vector<PlannedInvocation> invocations;

  bool operator==(const Plan&) const = default;
};

/// The `relay:plan` text: one line per invocation, `<trigger> <max-attempts> <timeout-ms>
/// <app>/<handler>`, trigger `e` (event), `s` (schedule) or `r` (a replay copy), then, when it
/// has flow control, a tab and its gates (encodeFlow). Handler names hold no control characters
/// (app/template validation), so a newline separates entries and a tab ends the field. The Lua
/// scripts parse the same text (lifecycle_lua_library.h).
std::string encodePlan(const Plan& plan);
/// Nullopt for text of another shape (a corrupt or foreign field).
std::optional<Plan> decodePlan(std::string_view text);

/// The `relay:limits` text recorded with the plan: one line per invocation that has a deadline
/// or a start timeout, `<deadline-ms> <start-timeout-ms> <app>/<handler>`; empty when none has.
/// A separate field, so that a plan of a Relay without deadlines reads the same.
std::string encodeLimits(const Plan& plan);
/// Sets the limits of `plan`'s invocations from `text`; false for text of another shape.
bool applyLimits(Plan& plan, std::string_view text);

}  // namespace relay::invocation
