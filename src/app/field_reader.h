#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "app/template_errors.h"
#include "common/duration.h"

namespace relay::app {

/// Typed, strict reads of template values: each returns nullopt after reporting what was
/// expected, at the value's position and under its path. Only YAML 1.2 core-schema types are
/// accepted (`"4"` is not an integer, `yes` is not a boolean).
class FieldReader {
 public:
  explicit FieldReader(TemplateErrors& errors) : errors_(errors) {}

  /// The children of a map with a fixed key set: reports a value that is not a map (`what`
  /// completes "expected ..."), unknown keys (with a did-you-mean) and missing required keys.
  /// Duplicate and non-scalar keys are left to checkYamlKeys; the first occurrence wins.
  std::optional<std::map<std::string, Field>> readMap(
      const Field& field, std::string_view what, std::initializer_list<std::string_view> allowed,
      std::initializer_list<std::string_view> required);

  std::optional<std::string> readString(const Field& field);
  std::optional<std::int64_t> readInt(const Field& field, std::int64_t min, std::int64_t max);
  std::optional<bool> readBool(const Field& field);
  /// A finite number in [min, max].
  std::optional<double> readNumber(const Field& field, double min, double max);
  /// A duration in (0, max] (`30s`, `1m30s`).
  std::optional<Millis> readDuration(const Field& field, Millis max);
  /// A byte size in [min, max] (`256MiB`, or a plain number of bytes).
  std::optional<std::uint64_t> readSize(const Field& field, std::uint64_t min, std::uint64_t max);

  void error(const Field& field, const std::string& message);

 private:
  void expected(const Field& field, const std::string& what, const std::string& hint = "");

  TemplateErrors& errors_;
};

/// The child `key` of a map readMap() read; null when the template does not set it.
const Field* findField(const std::map<std::string, Field>& fields, const std::string& key);

/// The allowed name closest to `key` when it is probably a typo of it, else empty.
std::string_view closestName(std::string_view key, std::initializer_list<std::string_view> names);

}  // namespace relay::app
