#include "invocation/plan.h"

#include "common/whole_number.h"

namespace relay::invocation {
namespace {

// Splits off the text before the first `separator`; false when there is none.
bool take(std::string_view& rest, char separator, std::string_view& part) {
  const std::size_t at = rest.find(separator);
  if (at == std::string_view::npos) return false;
  part = rest.substr(0, at);
  rest.remove_prefix(at + 1);
  return true;
}

}  // namespace

std::string PlannedInvocation::field() const { return app + "/" + handler; }

std::string encodePlan(const Plan& plan) {
  std::string text;
  for (const PlannedInvocation& invocation : plan.invocations) {
    text += invocation.trigger == runtime::Trigger::kSchedule ? 's'
            : invocation.trigger == runtime::Trigger::kReplay ? 'r'
                                                              : 'e';
    text += ' ' + std::to_string(invocation.max_attempts) + ' ' +
            std::to_string(invocation.timeout.count()) + ' ' + invocation.field();
    if (!invocation.flow.empty()) text += '\t' + encodeFlow(invocation.flow);
    text += '\n';
  }
  return text;
}

std::optional<Plan> decodePlan(std::string_view text) {
  Plan plan;
  while (!text.empty()) {
    std::string_view line;
    if (!take(text, '\n', line)) return std::nullopt;
    std::optional<FlowControl> flow = FlowControl{};
    if (const std::size_t tab = line.find('\t'); tab != std::string_view::npos) {
      // The encoder writes a tab only before gates.
      flow = tab + 1 < line.size() ? decodeFlow(line.substr(tab + 1)) : std::nullopt;
      line = line.substr(0, tab);
    }
    if (!flow) return std::nullopt;
    std::string_view trigger, attempts, timeout, app;
    if (!take(line, ' ', trigger) || !take(line, ' ', attempts) || !take(line, ' ', timeout) ||
        !take(line, '/', app) || line.empty() || app.empty()) {
      return std::nullopt;
    }
    PlannedInvocation invocation;
    long long timeout_ms = 0;
    if (trigger == "e") {
      invocation.trigger = runtime::Trigger::kEvent;
    } else if (trigger == "s") {
      invocation.trigger = runtime::Trigger::kSchedule;
    } else if (trigger == "r") {
      invocation.trigger = runtime::Trigger::kReplay;
    } else {
      return std::nullopt;
    }
    if (!parseWholeNumber(attempts, invocation.max_attempts) || invocation.max_attempts < 1 ||
        !parseWholeNumber(timeout, timeout_ms) || timeout_ms < 0) {
      return std::nullopt;
    }
    invocation.timeout = std::chrono::milliseconds(timeout_ms);
    invocation.app = app;
    invocation.handler = line;
    invocation.flow = std::move(*flow);
    plan.invocations.push_back(std::move(invocation));
  }
  return plan;
}

std::string encodeLimits(const Plan& plan) {
  std::string text;
  for (const PlannedInvocation& invocation : plan.invocations) {
    if (invocation.deadline.count() <= 0 && invocation.start_timeout.count() <= 0) continue;
    text += std::to_string(invocation.deadline.count()) + ' ' +
            std::to_string(invocation.start_timeout.count()) + ' ' + invocation.field() + '\n';
  }
  return text;
}

bool applyLimits(Plan& plan, std::string_view text) {
  while (!text.empty()) {
    std::string_view line, deadline, start_timeout;
    long long deadline_ms = 0, start_ms = 0;
    if (!take(text, '\n', line) || !take(line, ' ', deadline) || !take(line, ' ', start_timeout) ||
        !parseWholeNumber(deadline, deadline_ms) || !parseWholeNumber(start_timeout, start_ms) ||
        deadline_ms < 0 || start_ms < 0) {
      return false;
    }
    for (PlannedInvocation& invocation : plan.invocations) {
      if (invocation.field() != line) continue;
      invocation.deadline = std::chrono::milliseconds(deadline_ms);
      invocation.start_timeout = std::chrono::milliseconds(start_ms);
    }
  }
  return true;
}

}  // namespace relay::invocation
