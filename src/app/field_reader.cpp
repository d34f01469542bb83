#include "app/field_reader.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "app/yaml_document.h"
#include "common/size.h"
#include "yaml/core_schema.h"

namespace relay::app {
namespace {

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string joined(std::initializer_list<std::string_view> names) {
  std::string out;
  for (const std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// A scalar's text, for the scalar types that may spell a duration or a size.
bool isTextual(const YAML::Node& node) {
  const yaml::Type type = yaml::typeOf(node);
  return type == yaml::Type::kString || type == yaml::Type::kInt || type == yaml::Type::kFloat;
}

}  // namespace

std::string_view closestName(std::string_view key, std::initializer_list<std::string_view> names) {
  std::string_view best;
  std::size_t best_distance = 0;
  for (const std::string_view name : names) {
    const std::size_t distance = editDistance(key, name);
    if (best.empty() || distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  // Close enough to be a typo: at most 2 edits, and fewer than half of the name.
  return best_distance <= 2 && best_distance * 2 < best.size() ? best : std::string_view();
}

void FieldReader::error(const Field& field, const std::string& message) {
  errors_.add(field.at(), atPath(field.path, message));
}

void FieldReader::expected(const Field& field, const std::string& what, const std::string& hint) {
  error(field, "expected " + what + ", got " + yaml::describe(field.value) + hint);
}

std::optional<std::map<std::string, Field>> FieldReader::readMap(
    const Field& field, std::string_view what, std::initializer_list<std::string_view> allowed,
    std::initializer_list<std::string_view> required) {
  if (!field.value.IsMap()) {
    expected(field, std::string(what));
    return std::nullopt;
  }
  std::map<std::string, Field> children;
  for (const auto& pair : field.value) {
    if (!pair.first.IsScalar()) continue;
    const std::string& key = pair.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      const std::string_view guess = closestName(key, allowed);
      errors_.add(pair.first,
                  atPath(field.path,
                         "unknown key \"" + key + "\"" +
                             (guess.empty() ? " (expected one of: " + joined(allowed) + ")"
                                            : " (did you mean \"" + std::string(guess) + "\"?)")));
      continue;
    }
    children.try_emplace(key, Field{childPath(field.path, key), pair.second, pair.first});
  }
  for (const std::string_view key : required) {
    if (!children.contains(std::string(key))) {
      errors_.add(field.value,
                  atPath(field.path, "missing required key \"" + std::string(key) + "\""));
    }
  }
  return children;
}

std::optional<std::string> FieldReader::readString(const Field& field) {
  const yaml::Type type = yaml::typeOf(field.value);
  if (type == yaml::Type::kString) return field.value.Scalar();
  const bool scalar =
      type == yaml::Type::kBool || type == yaml::Type::kInt || type == yaml::Type::kFloat;
  expected(field, "a string",
           scalar ? " (quote it if you mean the text: \"" + field.value.Scalar() + "\")" : "");
  return std::nullopt;
}

std::optional<std::int64_t> FieldReader::readInt(const Field& field, std::int64_t min,
                                                 std::int64_t max) {
  const std::optional<std::int64_t> value = yaml::intValue(field.value);
  if (!value) {
    const bool quoted_number = yaml::typeOf(field.value) == yaml::Type::kString &&
                               !field.value.Scalar().empty() &&
                               std::all_of(field.value.Scalar().begin(), field.value.Scalar().end(),
                                           [](char c) { return c >= '0' && c <= '9'; });
    expected(field, "an integer", quoted_number ? " (remove the quotes)" : "");
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    error(field, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                     ", got " + field.value.Scalar());
    return std::nullopt;
  }
  return value;
}

std::optional<bool> FieldReader::readBool(const Field& field) {
  if (const std::optional<bool> value = yaml::boolValue(field.value)) return value;
  std::string hint;
  if (yaml::isYaml11Boolean(field.value)) {
    hint = " (YAML 1.1 spellings such as yes, no, on, off are strings here)";
  } else if (yaml::typeOf(field.value) == yaml::Type::kString &&
             (field.value.Scalar() == "true" || field.value.Scalar() == "false")) {
    hint = " (remove the quotes)";
  }
  expected(field, "true or false", hint);
  return std::nullopt;
}

std::optional<double> FieldReader::readNumber(const Field& field, double min, double max) {
  const yaml::Type type = yaml::typeOf(field.value);
  if (type != yaml::Type::kInt && type != yaml::Type::kFloat) {
    expected(field, "a number");
    return std::nullopt;
  }
  const Result<double> value = yaml::numberValue(field.value);
  if (!value) {
    error(field, value.error().message);
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    std::ostringstream range;
    range << "must be between " << min << " and " << max << ", got " << field.value.Scalar();
    error(field, range.str());
    return std::nullopt;
  }
  return *value;
}

std::optional<Millis> FieldReader::readDuration(const Field& field, Millis max) {
  if (!isTextual(field.value)) {
    expected(field, "a duration such as 30s or 1m30s");
    return std::nullopt;
  }
  const Result<Millis> value = parseDuration(field.value.Scalar());
  if (!value) {
    error(field, value.error().message);
    return std::nullopt;
  }
  if (value->count() <= 0) {
    error(field, "must be greater than 0");
    return std::nullopt;
  }
  if (*value > max) {
    error(field, "must be at most " + formatDuration(max) + ", got " + field.value.Scalar());
    return std::nullopt;
  }
  return *value;
}

std::optional<std::uint64_t> FieldReader::readSize(const Field& field, std::uint64_t min,
                                                   std::uint64_t max) {
  if (!isTextual(field.value)) {
    expected(field, "a size such as 256MiB");
    return std::nullopt;
  }
  const Result<std::uint64_t> value = parseSize(field.value.Scalar());
  if (!value) {
    error(field, value.error().message);
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    error(field, "must be between " + formatSize(min) + " and " + formatSize(max) + ", got " +
                     field.value.Scalar());
    return std::nullopt;
  }
  return *value;
}

const Field* findField(const std::map<std::string, Field>& fields, const std::string& key) {
  const auto it = fields.find(key);
  return it == fields.end() ? nullptr : &it->second;
}

}  // namespace relay::app
