#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/duration.h"
#include "runtime/runtime.h"
#include "schedule/cron.h"
#include "schedule/time_zone.h"

namespace relay::pattern {
class Pattern;
}

namespace relay::app {

// Defaults and limits of template.yaml (docs/apps.md lists them for users).
inline constexpr int kDefaultConcurrency = 4;
inline constexpr int kMaxConcurrency = 1024;
inline constexpr std::uint64_t kDefaultMemoryBytes = 256ULL << 20;
inline constexpr std::uint64_t kMinMemoryBytes = 4ULL << 20;
inline constexpr std::uint64_t kMaxMemoryBytes = 256ULL << 30;
inline constexpr double kDefaultCpus = 1.0;
inline constexpr double kMinCpus = 0.01;  // the smallest quota cgroups and Docker accept
inline constexpr double kMaxCpus = 64.0;
inline constexpr int kDefaultPids = 128;
inline constexpr int kMaxPids = 65536;
inline constexpr Millis kDefaultTimeout = std::chrono::seconds(30);
inline constexpr Millis kMaxTimeout = std::chrono::minutes(5);
inline constexpr int kDefaultRetries = 4;
inline constexpr int kMaxRetries = 20;
inline constexpr std::string_view kDefaultTimeZone = "UTC";
/// docs/apps.md "Deadlines": the longest `deadline` and `start_timeout`.
inline constexpr Millis kMaxDeadline = std::chrono::hours(24 * 30);
/// docs/replay.md "Archive": the longest `archive.retention`.
inline constexpr Millis kMaxArchiveRetention = std::chrono::hours(24 * 366);
inline constexpr std::string_view kTemplateFileName = "template.yaml";

// Flow control (docs/apps.md "Flow control"): the finest period or interval Relay keeps to.
inline constexpr Millis kFlowResolution = std::chrono::milliseconds(10);
inline constexpr int kMaxThrottleLimit = 1'000'000;
inline constexpr int kMaxKeyConcurrency = 10'000;
inline constexpr Millis kMaxThrottlePeriod = std::chrono::hours(24);
inline constexpr Millis kDefaultDedupeTtl = std::chrono::hours(24);
inline constexpr Millis kMaxDedupeTtl = std::chrono::hours(24 * 30);
inline constexpr Millis kMaxDebouncePeriod = std::chrono::hours(1);
inline constexpr Millis kMaxDebounceWait = std::chrono::hours(24);
inline constexpr int kDefaultDebounceWaitFactor = 10;  // max_wait: 10 periods unless set

/// A dotted path to an event field (`tenant_id`, `new_image.tenant_id`), as written and split.
struct KeyPath {
  std::string text;
  std::vector<std::string> segments;
  bool operator==(const KeyPath&) const = default;
};

/// `throttle:` at most `limit` starts per `period` cluster-wide, `burst` more at once.
struct ThrottleRule {
  int limit = 1;
  Millis period = std::chrono::seconds(1);
  int burst = 0;
};

/// A rule's `concurrency:` at most `limit` running invocations per value of `key`.
struct KeyConcurrencyRule {
  int limit = 1;
  KeyPath key;
};

/// `dedupe:` an event whose `key` was seen within `ttl` does not run.
struct DedupeRule {
  KeyPath key;
  Millis ttl = kDefaultDedupeTtl;
};

/// `debounce:` a burst of one `key` runs once, with its latest event, after `period` without a
/// newer one, at most `max_wait` after the burst's first event.
struct DebounceRule {
  KeyPath key;
  Millis period = std::chrono::seconds(1);
  Millis max_wait = std::chrono::seconds(10);
};

/// `singleton:` one running invocation per value of `key`; a newer event replaces a waiting one.
struct SingletonRule {
  KeyPath key;
};

/// The flow control of one rule.
struct FlowRules {
  std::optional<ThrottleRule> throttle;
  std::optional<KeyConcurrencyRule> concurrency;
  std::optional<DedupeRule> dedupe;
  std::optional<DebounceRule> debounce;
  std::optional<SingletonRule> singleton;

  bool empty() const { return !throttle && !concurrency && !dedupe && !debounce && !singleton; }
};

/// Per-invocation limits.
struct Resources {
  std::uint64_t memory_bytes = kDefaultMemoryBytes;
  double cpus = kDefaultCpus;
  int pids = kDefaultPids;
};

/// One `events:` entry: which handler runs for events matching which pattern.
struct Rule {
  std::string handler;
  std::shared_ptr<const pattern::Pattern> pattern;
  Millis timeout = kDefaultTimeout;
  int retries = kDefaultRetries;
  /// docs/apps.md "Deadlines": from the event's publication, no attempt starts after
  /// `deadline`, no first attempt after `start_timeout`; 0: none.
  Millis deadline{0};
  Millis start_timeout{0};
  /// The pattern as compact JSON (YAML core-schema typing kept: a quoted "1" stays a string),
  /// for `relay app inspect`.
  std::string pattern_json;
  int line = 0;  // 1-based line of the entry in template.yaml
  FlowRules flow;
};

/// One `schedules:` entry.
struct Schedule {
  std::string name;
  std::string cron_text;  // as written
  schedule::CronExpression cron;
  schedule::TimeZone time_zone;
  std::string handler;
  Millis timeout = kDefaultTimeout;
  int retries = kDefaultRetries;
  std::string payload_json = "{}";  // a JSON object, compact
  int line = 0;
  Millis deadline{0};  // as Rule's, counted from the occurrence's publication
  Millis start_timeout{0};
};

/// The app's `archive:` (docs/replay.md "Archive"): the events to keep for replays longer than
/// the stream keeps them.
struct Archive {
  Millis retention{0};
  /// Which events: those this pattern matches; null: those one of the app's rules matches.
  std::shared_ptr<const pattern::Pattern> pattern;
  std::string pattern_json;  // for `relay app inspect`
};

/// A loaded, valid app: its template with every default filled in. Immutable once built;
/// shared between registry snapshots.
struct App {
  std::string name;
  std::filesystem::path dir;
  runtime::Language runtime = runtime::Language::kExec;  // the template's `runtime:`
  std::string image;         // runtime::defaultImage(runtime) when the template names none
  bool image_named = false;  // the template names `image` (the sandbox then runs on its root)
  int concurrency = kDefaultConcurrency;
  bool network = false;
  /// With network: only these destinations (docs/apps.md "egress"); empty: any but the
  /// always denied ones.
  std::vector<runtime::EgressAllow> egress;
  std::vector<std::pair<std::string, std::string>> env;  // in template order
  Resources resources;
  /// The app's own `throttle:`, one bucket shared by every rule and schedule of the app.
  std::optional<ThrottleRule> throttle;
  std::vector<Rule> rules;          // in template order (the dispatch order)
  std::vector<Schedule> schedules;  // in template order
  std::optional<Archive> archive;

  const Rule* findRule(std::string_view handler) const;
  const Schedule* findSchedule(std::string_view name) const;
};

}  // namespace relay::app
