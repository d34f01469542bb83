#include "catalog/flow_gates.h"

#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

#include "event/render.h"
#include "redis/sha1.h"

namespace relay::catalog {
namespace {

using invocation::FlowScope;

invocation::ThrottleGate throttleGate(const app::ThrottleRule& rule, FlowScope scope) {
  invocation::ThrottleGate gate;
  gate.scope = scope;
  gate.limit = rule.limit;
  gate.period = rule.period;
  gate.burst = rule.burst;
  return gate;
}

void addAppThrottle(const app::App& app, invocation::FlowControl& flow) {
  if (app.throttle) flow.throttles.push_back(throttleGate(*app.throttle, FlowScope::kApp));
}

}  // namespace

std::string flowKeyValue(const event::Event& event, const app::KeyPath& path) {
  std::optional<event::Value> value = event.root();
  for (const std::string& segment : path.segments) {
    if (!value->isObject()) return std::string(invocation::kMissingKeyValue);
    value = value->find(segment);
    if (!value) return std::string(invocation::kMissingKeyValue);
  }
  std::string json = event::render(*value, std::numeric_limits<std::size_t>::max());
  if (json.size() > invocation::kMaxKeyValueBytes) return "#" + redis::sha1Hex(json);
  return json;
}

invocation::FlowControl flowControl(const app::App& app, const app::Rule& rule,
                                    const event::Event& event) {
  invocation::FlowControl flow;
  addAppThrottle(app, flow);
  const app::FlowRules& rules = rule.flow;
  if (rules.throttle) flow.throttles.push_back(throttleGate(*rules.throttle, FlowScope::kRule));
  // A singleton is a key limit of one that also replaces its waiting event (the template
  // refuses both on one rule).
  if (rules.concurrency || rules.singleton) {
    invocation::KeyGate gate;
    gate.limit = rules.concurrency ? rules.concurrency->limit : 1;
    gate.singleton = !rules.concurrency;
    gate.value =
        flowKeyValue(event, rules.concurrency ? rules.concurrency->key : rules.singleton->key);
    flow.key = std::move(gate);
  }
  if (rules.dedupe) {
    // An event without the key has nothing to be a duplicate of (docs/apps.md): it runs.
    std::string value = flowKeyValue(event, rules.dedupe->key);
    if (value != invocation::kMissingKeyValue) {
      invocation::DedupeGate gate;
      gate.ttl = rules.dedupe->ttl;
      gate.value = std::move(value);
      flow.dedupe = std::move(gate);
    }
  }
  if (rules.debounce) {
    invocation::DebounceGate gate;
    gate.period = rules.debounce->period;
    gate.max_wait = rules.debounce->max_wait;
    gate.value = flowKeyValue(event, rules.debounce->key);
    flow.debounce = std::move(gate);
  }
  return flow;
}

invocation::FlowControl scheduleFlowControl(const app::App& app) {
  invocation::FlowControl flow;
  addAppThrottle(app, flow);
  return flow;
}

}  // namespace relay::catalog
