#include "app/flow_reader.h"

#include <algorithm>

#include "yaml/core_schema.h"

namespace relay::app {
namespace {

constexpr std::size_t kMaxKeyPathBytes = 256;

}  // namespace

std::optional<KeyPath> parseKeyPath(std::string_view text) {
  KeyPath path;
  path.text = std::string(text);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    const std::string_view part = text.substr(start, dot - start);
    if (part.empty()) return std::nullopt;
    path.segments.emplace_back(part);
    if (dot == std::string_view::npos) return path;
    start = dot + 1;
  }
}

std::optional<Millis> FlowReader::readPeriod(const Field& field, Millis max) {
  const std::optional<Millis> period = reader_.readDuration(field, max);
  if (period && *period < kFlowResolution) {
    reader_.error(field, "must be at least " + formatDuration(kFlowResolution) +
                             " (the resolution of flow control), got " + field.value.Scalar());
    return std::nullopt;
  }
  return period;
}

std::optional<KeyPath> FlowReader::readKey(const Field& field) {
  const std::optional<std::string> text = reader_.readString(field);
  if (!text) return std::nullopt;
  if (text->empty() || text->size() > kMaxKeyPathBytes) {
    reader_.error(field,
                  "expected the dotted path of an event field such as tenant_id or "
                  "new_image.tenant_id (1 to 256 bytes), got " +
                      (text->empty() ? std::string("an empty string")
                                     : std::to_string(text->size()) + " bytes"));
    return std::nullopt;
  }
  std::optional<KeyPath> path = parseKeyPath(*text);
  if (!path) {
    reader_.error(field, "\"" + *text +
                             "\" is not a dotted path of event fields: a part between dots is "
                             "empty");
  }
  return path;
}

std::optional<ThrottleRule> FlowReader::readThrottle(const Field& field) {
  const auto fields =
      reader_.readMap(field, "a map with limit and period (e.g. {limit: 20, period: 1s})",
                      {"limit", "period", "burst"}, {"limit", "period"});
  if (!fields) return std::nullopt;
  ThrottleRule throttle;
  bool valid = fields->count("limit") && fields->count("period");
  if (const Field* limit = findField(*fields, "limit")) {
    const auto value = reader_.readInt(*limit, 1, kMaxThrottleLimit);
    valid = valid && value;
    if (value) throttle.limit = static_cast<int>(*value);
  }
  if (const Field* period = findField(*fields, "period")) {
    const auto value = readPeriod(*period, kMaxThrottlePeriod);
    valid = valid && value;
    if (value) throttle.period = *value;
  }
  if (const Field* burst = findField(*fields, "burst")) {
    const auto value = reader_.readInt(*burst, 0, kMaxThrottleLimit);
    valid = valid && value;
    if (value) throttle.burst = static_cast<int>(*value);
  }
  if (valid && throttle.period.count() < throttle.limit) {
    // The GCRA spaces starts at least 1ms apart (its times are whole Redis milliseconds).
    reader_.error(field, "limit " + std::to_string(throttle.limit) + " per " +
                             formatDuration(throttle.period) +
                             " would start more than one per millisecond: at most " +
                             std::to_string(throttle.period.count()) + " per " +
                             formatDuration(throttle.period));
    return std::nullopt;
  }
  if (!valid) return std::nullopt;
  return throttle;
}

std::optional<KeyConcurrencyRule> FlowReader::readConcurrency(const Field& field) {
  if (!field.value.IsMap()) {
    reader_.error(field,
                  "expected a map {limit: N, key: field.path}: a rule's concurrency is per "
                  "key (the app-wide cap is the top-level concurrency), got " +
                      yaml::describe(field.value));
    return std::nullopt;
  }
  const auto fields =
      reader_.readMap(field, "a map with limit and key", {"limit", "key"}, {"limit", "key"});
  if (!fields) return std::nullopt;
  KeyConcurrencyRule rule;
  bool valid = fields->count("limit") && fields->count("key");
  if (const Field* limit = findField(*fields, "limit")) {
    const auto value = reader_.readInt(*limit, 1, kMaxKeyConcurrency);
    valid = valid && value;
    if (value) rule.limit = static_cast<int>(*value);
  }
  if (const Field* key = findField(*fields, "key")) {
    auto path = readKey(*key);
    valid = valid && path;
    if (path) rule.key = std::move(*path);
  }
  if (!valid) return std::nullopt;
  return rule;
}

std::optional<DedupeRule> FlowReader::readDedupe(const Field& field) {
  const auto fields = reader_.readMap(field, "a map with key (e.g. {key: order_id, ttl: 24h})",
                                      {"key", "ttl"}, {"key"});
  if (!fields) return std::nullopt;
  DedupeRule rule;
  bool valid = fields->count("key") > 0;
  if (const Field* key = findField(*fields, "key")) {
    auto path = readKey(*key);
    valid = valid && path;
    if (path) rule.key = std::move(*path);
  }
  if (const Field* ttl = findField(*fields, "ttl")) {
    const auto value = readPeriod(*ttl, kMaxDedupeTtl);
    valid = valid && value;
    if (value) rule.ttl = *value;
  }
  if (!valid) return std::nullopt;
  return rule;
}

std::optional<DebounceRule> FlowReader::readDebounce(const Field& field) {
  const auto fields = reader_.readMap(
      field, "a map with key and period (e.g. {key: user_id, period: 30s, max_wait: 5m})",
      {"key", "period", "max_wait"}, {"key", "period"});
  if (!fields) return std::nullopt;
  DebounceRule rule;
  bool valid = fields->count("key") && fields->count("period");
  if (const Field* key = findField(*fields, "key")) {
    auto path = readKey(*key);
    valid = valid && path;
    if (path) rule.key = std::move(*path);
  }
  if (const Field* period = findField(*fields, "period")) {
    const auto value = readPeriod(*period, kMaxDebouncePeriod);
    valid = valid && value;
    if (value) rule.period = *value;
  }
  rule.max_wait = std::min(rule.period * kDefaultDebounceWaitFactor, kMaxDebounceWait);
  if (const Field* max_wait = findField(*fields, "max_wait")) {
    const auto value = readPeriod(*max_wait, kMaxDebounceWait);
    valid = valid && value;
    if (value && valid && *value < rule.period) {
      reader_.error(*max_wait, "must be at least the period (" + formatDuration(rule.period) +
                                   "), got " + max_wait->value.Scalar());
      valid = false;
    }
    if (value) rule.max_wait = *value;
  }
  if (!valid) return std::nullopt;
  return rule;
}

std::optional<SingletonRule> FlowReader::readSingleton(const Field& field) {
  const auto fields =
      reader_.readMap(field, "a map with key (e.g. {key: account_id})", {"key"}, {"key"});
  if (!fields) return std::nullopt;
  const Field* key = findField(*fields, "key");
  if (!key) return std::nullopt;
  auto path = readKey(*key);
  if (!path) return std::nullopt;
  return SingletonRule{std::move(*path)};
}

FlowRules FlowReader::readRule(const std::map<std::string, Field>& fields) {
  FlowRules flow;
  if (const Field* field = findField(fields, "throttle")) flow.throttle = readThrottle(*field);
  if (const Field* field = findField(fields, "concurrency")) {
    flow.concurrency = readConcurrency(*field);
  }
  if (const Field* field = findField(fields, "dedupe")) flow.dedupe = readDedupe(*field);
  if (const Field* field = findField(fields, "debounce")) flow.debounce = readDebounce(*field);
  const Field* singleton = findField(fields, "singleton");
  if (singleton) flow.singleton = readSingleton(*singleton);
  if (singleton && findField(fields, "concurrency")) {
    reader_.error(*singleton,
                  "a rule has singleton or a per-key concurrency, not both "
                  "(singleton is a limit of 1 per key that replaces waiting events)");
  }
  if (singleton && findField(fields, "debounce")) {
    reader_.error(*singleton,
                  "a rule has singleton or debounce, not both (each replaces the "
                  "events it holds back in its own way)");
  }
  return flow;
}

}  // namespace relay::app
