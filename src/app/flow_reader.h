#pragma once

#include <map>
#include <optional>
#include <string>

#include "app/app.h"
#include "app/field_reader.h"
#include "app/template_errors.h"

namespace relay::app {

/// The flow-control keys of template.yaml (docs/apps.md "Flow control"), read strictly: each
/// bad value is reported at its position with what was expected (a zero limit, a missing or
/// empty key path, a period below kFlowResolution, a combination that means nothing).
class FlowReader {
 public:
  explicit FlowReader(FieldReader& reader) : reader_(reader) {}

  /// `throttle: {limit, period, burst}` of a rule or of the app.
  std::optional<ThrottleRule> readThrottle(const Field& field);
  /// The flow keys among a rule's fields (`throttle`, `concurrency`, `dedupe`, `debounce`,
  /// `singleton`), with the checks between them.
  FlowRules readRule(const std::map<std::string, Field>& fields);

 private:
  std::optional<KeyConcurrencyRule> readConcurrency(const Field& field);
  std::optional<DedupeRule> readDedupe(const Field& field);
  std::optional<DebounceRule> readDebounce(const Field& field);
  std::optional<SingletonRule> readSingleton(const Field& field);
  std::optional<KeyPath> readKey(const Field& field);
  /// A duration of at least kFlowResolution and at most `max`.
  std::optional<Millis> readPeriod(const Field& field, Millis max);

  FieldReader& reader_;
};

/// `text` split at its dots; nullopt when a part is empty (`a..b`, `.a`, ``).
std::optional<KeyPath> parseKeyPath(std::string_view text);

}  // namespace relay::app
