#include "invocation/flow.h"

#include "common/enum_names.h"
#include "common/whole_number.h"

namespace relay::invocation {
namespace {

// The reasons of `relay:wait:` fields, both directions from one table.
constexpr EnumNames<FlowWait, 3> kFlowWaitNames = {{{
    {FlowWait::kThrottled, "throttled"},
    {FlowWait::kKeyBusy, "key_busy"},
    {FlowWait::kDebounced, "debounced"},
}}};

// The next space-separated word of `rest` (the last one takes the rest); false when empty.
bool nextWord(std::string_view& rest, std::string_view& word, bool last = false) {
  if (rest.empty()) return false;
  const std::size_t at = last ? std::string_view::npos : rest.find(' ');
  word = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view() : rest.substr(at + 1);
  return !word.empty();
}

bool scopeOf(std::string_view word, FlowScope& scope) {
  if (word == "a" || word == "r") {
    scope = static_cast<FlowScope>(word[0]);
    return true;
  }
  return false;
}

template <typename T>
bool positive(std::string_view word, T& out, T min = 1) {
  return parseWholeNumber(word, out) && out >= min;
}

bool millisOf(std::string_view word, std::chrono::milliseconds& out) {
  long long ms = 0;
  if (!positive(word, ms)) return false;
  out = std::chrono::milliseconds(ms);
  return true;
}

std::string ms(std::chrono::milliseconds duration) { return std::to_string(duration.count()); }

bool decodeGate(std::string_view part, FlowControl& flow) {
  std::string_view kind, scope_word, word;
  FlowScope scope = FlowScope::kRule;
  if (!nextWord(part, kind) || !nextWord(part, scope_word) || !scopeOf(scope_word, scope)) {
    return false;
  }
  if (kind == "t") {
    ThrottleGate gate;
    gate.scope = scope;
    std::string_view limit, period, burst;
    if (!nextWord(part, limit) || !nextWord(part, period) || !nextWord(part, burst, true) ||
        !positive(limit, gate.limit) || !millisOf(period, gate.period) ||
        !positive(burst, gate.burst, 0)) {
      return false;
    }
    flow.throttles.push_back(gate);
    return true;
  }
  if (kind == "k" && !flow.key) {
    KeyGate gate;
    gate.scope = scope;
    std::string_view limit, singleton;
    if (!nextWord(part, limit) || !positive(limit, gate.limit) || !nextWord(part, singleton) ||
        (singleton != "0" && singleton != "1") || !nextWord(part, word, true)) {
      return false;
    }
    gate.singleton = singleton == "1";
    gate.value = word;
    flow.key = std::move(gate);
    return true;
  }
  if (kind == "d" && !flow.dedupe) {
    DedupeGate gate;
    gate.scope = scope;
    std::string_view ttl;
    if (!nextWord(part, ttl) || !millisOf(ttl, gate.ttl) || !nextWord(part, word, true)) {
      return false;
    }
    gate.value = word;
    flow.dedupe = std::move(gate);
    return true;
  }
  if (kind == "b" && !flow.debounce) {
    DebounceGate gate;
    gate.scope = scope;
    std::string_view period, max_wait;
    if (!nextWord(part, period) || !millisOf(period, gate.period) || !nextWord(part, max_wait) ||
        !millisOf(max_wait, gate.max_wait) || !nextWord(part, word, true)) {
      return false;
    }
    gate.value = word;
    flow.debounce = std::move(gate);
    return true;
  }
  return false;
}

}  // namespace

std::string encodeFlow(const FlowControl& flow) {
  std::string text;
  const auto add = [&text](const std::string& part) {
    if (!text.empty()) text += '\t';
    text += part;
  };
  const auto scope = [](FlowScope s) { return std::string(1, static_cast<char>(s)); };
  for (const ThrottleGate& gate : flow.throttles) {
    add("t " + scope(gate.scope) + " " + std::to_string(gate.limit) + " " + ms(gate.period) + " " +
        std::to_string(gate.burst));
  }
  if (flow.key) {
    add("k " + scope(flow.key->scope) + " " + std::to_string(flow.key->limit) +
        (flow.key->singleton ? " 1 " : " 0 ") + flow.key->value);
  }
  if (flow.dedupe) {
    add("d " + scope(flow.dedupe->scope) + " " + ms(flow.dedupe->ttl) + " " + flow.dedupe->value);
  }
  if (flow.debounce) {
    add("b " + scope(flow.debounce->scope) + " " + ms(flow.debounce->period) + " " +
        ms(flow.debounce->max_wait) + " " + flow.debounce->value);
  }
  return text;
}

std::optional<FlowControl> decodeFlow(std::string_view text) {
  FlowControl flow;
  while (!text.empty()) {
    const std::size_t tab = text.find('\t');
    if (!decodeGate(text.substr(0, tab), flow)) return std::nullopt;
    text = tab == std::string_view::npos ? std::string_view() : text.substr(tab + 1);
  }
  return flow;
}

std::string flowScopeName(FlowScope scope, std::string_view app, std::string_view field) {
  return std::string(scope == FlowScope::kApp ? app : field);
}

std::string_view flowWaitName(FlowWait wait) { return kFlowWaitNames.name(wait); }

std::optional<FlowWaitState> parseFlowWait(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::optional<FlowWait> reason = kFlowWaitNames.parse(text.substr(0, colon));
  if (!reason) return std::nullopt;
  FlowWaitState state;
  state.reason = *reason;
  if (!parseWholeNumber(text.substr(colon + 1), state.until) || state.until < 0) {
    return std::nullopt;
  }
  return state;
}

}  // namespace relay::invocation
