#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relay::invocation {

/// Whose state a flow gate shares: every invocation of the app, or of the one rule.
enum class FlowScope : char { kApp = 'a', kRule = 'r' };

/// At most `limit` starts per `period` cluster-wide, `burst` more at once (GCRA).
struct ThrottleGate {
  FlowScope scope = FlowScope::kRule;
  int limit = 1;
  std::chrono::milliseconds period{1'000};
  int burst = 0;
  bool operator==(const ThrottleGate&) const = default;
};

/// At most `limit` running invocations per key value; a singleton (limit 1) also replaces a
/// waiting invocation of its key with a newer one.
struct KeyGate {
  FlowScope scope = FlowScope::kRule;
  int limit = 1;
  bool singleton = false;
  std::string value;  // catalog::flowKeyValue() of the event's key field
  bool operator==(const KeyGate&) const = default;
};

/// The first event of a key value within `ttl` runs; later ones are deduplicated.
struct DedupeGate {
  FlowScope scope = FlowScope::kRule;
  std::chrono::milliseconds ttl{86'400'000};
  std::string value;
  bool operator==(const DedupeGate&) const = default;
};

/// A burst of a key value runs once, with its latest event, after `period` without a newer one
/// (at most `max_wait` after the burst's first event); the earlier ones are superseded.
struct DebounceGate {
  FlowScope scope = FlowScope::kRule;
  std::chrono::milliseconds period{1'000};
  std::chrono::milliseconds max_wait{10'000};
  std::string value;
  bool operator==(const DebounceGate&) const = default;
};

/// The flow control of one planned invocation (docs/apps.md "Flow control", docs/pipeline.md
/// "Flow control"): the gates it passes before it starts, with the key values its event gave,
/// fixed in the plan at the message's first classification like its retries and timeout.
struct FlowControl {
  std::vector<ThrottleGate> throttles;  // the app's and the rule's, both apply
  std::optional<KeyGate> key;
  std::optional<DedupeGate> dedupe;
  std::optional<DebounceGate> debounce;

  bool empty() const { return throttles.empty() && !key && !dedupe && !debounce; }
  bool operator==(const FlowControl&) const = default;
};

/// The key value of an event field as flow gates name it: the field's compact JSON (`"acme"`,
/// `42`, `null`), kMissingKeyValue when the event has no such field (docs/apps.md: a missing
/// field is a key of its own), `#<sha1>` of the JSON when it is longer than kMaxKeyValueBytes.
/// Never holds a tab or a newline (JSON escapes them), so it fits in the plan's text.
inline constexpr std::string_view kMissingKeyValue = "-";
inline constexpr std::size_t kMaxKeyValueBytes = 128;

/// The gates as the plan records them after the invocation (plan.h): one per tab-separated
/// part, `t <scope> <limit> <period-ms> <burst>`, `k <scope> <limit> <0|1 singleton> <value>`,
/// `d <scope> <ttl-ms> <value>`, `b <scope> <period-ms> <max-wait-ms> <value>`. Empty for none.
std::string encodeFlow(const FlowControl& flow);
/// Nullopt for text of another shape.
std::optional<FlowControl> decodeFlow(std::string_view text);

/// The name a scope gives a gate's state: the app, or `<app>/<handler>` of the rule.
std::string flowScopeName(FlowScope scope, std::string_view app, std::string_view field);

/// Why a planned invocation waits (state-hash field `relay:wait:<app>/<handler>`, docs/pipeline.md
/// "Flow control"): throttled (its turn reserved), its key busy (queued behind the key's running
/// invocations), debounced (waiting for the end of its burst).
enum class FlowWait { kThrottled, kKeyBusy, kDebounced };
std::string_view flowWaitName(FlowWait wait);
/// `<reason>:<until-ms>` (0: until woken); nullopt for text of another shape.
struct FlowWaitState {
  FlowWait reason = FlowWait::kThrottled;
  std::int64_t until = 0;
};
std::optional<FlowWaitState> parseFlowWait(std::string_view text);

/// Prefix of the reserved field that says why an invocation waits for its flow control.
inline constexpr std::string_view kWaitPrefix = "relay:wait:";

}  // namespace relay::invocation
