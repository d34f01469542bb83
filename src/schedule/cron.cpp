#include "schedule/cron.h"

#include <array>
#include <bit>
#include <vector>

namespace relay::schedule {
namespace {

constexpr std::array<std::string_view, 12> kMonthNames = {"jan", "feb", "mar", "apr", "may", "jun",
                                                          "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> kDayNames = {"sun", "mon", "tue", "wed",
                                                       "thu", "fri", "sat"};

/// What one of the five fields accepts.
struct FieldSpec {
  std::string_view name;
  unsigned low;
  unsigned high;
  const std::string_view* names;  // names[i] stands for low + i; nullptr when names are not allowed
  std::size_t name_count;
  std::string_view names_hint;  // e.g. "jan-dec"
};

constexpr FieldSpec kMinute{"minute", 0, 59, nullptr, 0, ""};
constexpr FieldSpec kHour{"hour", 0, 23, nullptr, 0, ""};
constexpr FieldSpec kDayOfMonth{"day-of-month", 1, 31, nullptr, 0, ""};
constexpr FieldSpec kMonth{"month", 1, 12, kMonthNames.data(), kMonthNames.size(), "jan-dec"};
// 7 is accepted as a second spelling of Sunday and folded into bit 0 after parsing.
constexpr FieldSpec kDayOfWeek{"day-of-week", 0, 7, kDayNames.data(), kDayNames.size(), "sun-sat"};

struct Macro {
  std::string_view name;
  std::string_view expansion;
};

constexpr std::array<Macro, 7> kMacros = {{
    {"@yearly", "0 0 1 1 *"},
    {"@annually", "0 0 1 1 *"},
    {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},
    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
}};

constexpr std::string_view kFieldList = "minute hour day-of-month month day-of-week";

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> splitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && isSpace(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !isSpace(text[i])) ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string rangeText(unsigned low, unsigned high) {
  return std::to_string(low) + "-" + std::to_string(high);
}

/// Digits only; nullopt for anything else. Values too large for unsigned saturate so that the
/// caller reports them as out of range rather than as not-a-number.
std::optional<unsigned> parseNumber(std::string_view text) {
  if (text.empty()) return std::nullopt;
  unsigned long long value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > 1'000'000) value = 1'000'000;
  }
  return static_cast<unsigned>(value);
}

Error notAValue(const FieldSpec& field, std::string_view token) {
  std::string message = std::string(field.name) + " " + quoted(token) + " is not a number " +
                        rangeText(field.low, field.high);
  if (field.names != nullptr) message += " or a name " + std::string(field.names_hint);
  return Error::invalid(std::move(message));
}

/// One value of a field: a number within the field's range or (month, day-of-week) a name.
Result<unsigned> parseValue(const FieldSpec& field, std::string_view token) {
  if (const auto number = parseNumber(token)) {
    if (*number < field.low || *number > field.high) {
      return Error::invalid(std::string(field.name) + " " + quoted(token) + " is out of range " +
                            rangeText(field.low, field.high));
    }
    return *number;
  }
  for (std::size_t i = 0; i < field.name_count; ++i) {
    if (equalsIgnoringCase(token, field.names[i])) return field.low + static_cast<unsigned>(i);
  }
  return notAValue(field, token);
}

/// One list element: `*`, `v`, `a-b`, each optionally followed by `/step`; `v/step` means
/// `v-<max>/step`.
Result<std::uint64_t> parseElement(const FieldSpec& field, std::string_view element) {
  std::string_view base = element;
  std::optional<unsigned> step;
  if (const auto slash = element.find('/'); slash != std::string_view::npos) {
    base = element.substr(0, slash);
    const std::string_view step_text = element.substr(slash + 1);
    const auto number = parseNumber(step_text);
    if (!number) {
      return Error::invalid(std::string(field.name) + " step " + quoted(step_text) + " in " +
                            quoted(element) + " is not a number " + rangeText(1, field.high));
    }
    if (*number < 1 || *number > field.high) {
      return Error::invalid(std::string(field.name) + " step " + quoted(step_text) + " in " +
                            quoted(element) + " is out of range " + rangeText(1, field.high));
    }
    step = *number;
  }

  unsigned first = field.low;
  unsigned last = field.high;
  if (base != "*") {
    const auto dash = base.find('-');
    if (dash == std::string_view::npos) {
      auto value = parseValue(field, base);
      if (!value.ok()) return value.error();
      first = *value;
      last = step ? field.high : *value;
    } else {
      if (dash == 0 || dash + 1 == base.size()) {
        return Error::invalid(std::string(field.name) + " range " + quoted(base) +
                              " is missing a bound");
      }
      auto low = parseValue(field, base.substr(0, dash));
      if (!low.ok()) return low.error();
      auto high = parseValue(field, base.substr(dash + 1));
      if (!high.ok()) return high.error();
      if (*low > *high) {
        return Error::invalid(std::string(field.name) + " range " + quoted(base) +
                              " is reversed (" + std::to_string(*low) + " > " +
                              std::to_string(*high) + ")");
      }
      first = *low;
      last = *high;
    }
  }

  std::uint64_t bits = 0;
  for (unsigned value = first; value <= last; value += step.value_or(1)) bits |= 1ULL << value;
  return bits;
}

/// A whole field: a comma-separated list of elements, as a bit set over the field's values.
Result<std::uint64_t> parseField(const FieldSpec& field, std::string_view text) {
  std::uint64_t bits = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view element = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (element.empty()) {
      return Error::invalid(std::string(field.name) + " " + quoted(text) +
                            " has an empty list element");
    }
    auto element_bits = parseElement(field, element);
    if (!element_bits.ok()) return element_bits.error();
    bits |= *element_bits;
    if (comma == std::string_view::npos) return bits;
    start = comma + 1;
  }
}

std::optional<unsigned> lowestSetBitFrom(std::uint64_t bits, unsigned from) {
  if (from >= 64) return std::nullopt;
  const std::uint64_t remaining = bits >> from << from;
  if (remaining == 0) return std::nullopt;
  return static_cast<unsigned>(std::countr_zero(remaining));
}

}  // namespace

Result<CronExpression> CronExpression::parse(std::string_view text) {
  const std::string_view trimmed = trim(text);
  std::vector<std::string_view> fields = splitFields(trimmed);
  if (fields.empty()) {
    return Error::invalid("cron expression is empty; expected 5 fields (" +
                          std::string(kFieldList) + ") or a macro such as @daily");
  }

  if (fields.front().starts_with('@')) {
    if (fields.size() != 1) {
      return Error::invalid("macro " + quoted(fields.front()) + " must stand alone, got " +
                            std::to_string(fields.size()) + " fields");
    }
    for (const Macro& macro : kMacros) {
      if (equalsIgnoringCase(fields.front(), macro.name)) {
        auto expanded = parse(macro.expansion);
        if (!expanded.ok()) return expanded.error();  // unreachable: the expansions are valid
        expanded->text_ = std::string(trimmed);
        return expanded;
      }
    }
    return Error::invalid("unknown macro " + quoted(fields.front()) +
                          "; expected @yearly, @annually, @monthly, @weekly, @daily, @midnight "
                          "or @hourly");
  }

  if (fields.size() != 5) {
    return Error::invalid("expected 5 fields (" + std::string(kFieldList) + "), got " +
                          std::to_string(fields.size()));
  }

  CronExpression cron;
  cron.text_ = std::string(trimmed);
  const std::array<const FieldSpec*, 5> specs = {&kMinute, &kHour, &kDayOfMonth, &kMonth,
                                                 &kDayOfWeek};
  std::array<std::uint64_t, 5> bits{};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto field = parseField(*specs[i], fields[i]);
    if (!field.ok()) return field.error();
    bits[i] = *field;
  }
  cron.minutes_ = bits[0];
  cron.hours_ = static_cast<std::uint32_t>(bits[1]);
  cron.days_of_month_ = static_cast<std::uint32_t>(bits[2]);
  cron.months_ = static_cast<std::uint32_t>(bits[3]);
  std::uint64_t weekdays = bits[4];
  if ((weekdays >> 7 & 1U) != 0) weekdays = (weekdays | 1U) & ~(1ULL << 7);
  cron.days_of_week_ = static_cast<std::uint32_t>(weekdays);
  cron.day_of_month_star_ = fields[2].starts_with('*');
  cron.day_of_week_star_ = fields[4].starts_with('*');
  return cron;
}

bool CronExpression::matchesMonth(unsigned month) const {
  return month < 32 && (months_ >> month & 1U) != 0;
}

bool CronExpression::matchesDay(unsigned day_of_month, unsigned weekday) const {
  const bool by_month_day = day_of_month < 32 && (days_of_month_ >> day_of_month & 1U) != 0;
  const bool by_weekday = weekday < 7 && (days_of_week_ >> weekday & 1U) != 0;
  if (day_of_month_star_ || day_of_week_star_) return by_month_day && by_weekday;
  return by_month_day || by_weekday;
}

bool CronExpression::matchesLocal(const CivilMinute& when) const {
  return when.minute < 60 && (minutes_ >> when.minute & 1U) != 0 && when.hour < 24 &&
         (hours_ >> when.hour & 1U) != 0 && matchesMonth(when.month) &&
         matchesDay(when.day, when.weekday);
}

std::optional<unsigned> CronExpression::nextHour(unsigned from) const {
  return lowestSetBitFrom(hours_, from);
}

std::optional<unsigned> CronExpression::nextMinute(unsigned from) const {
  return lowestSetBitFrom(minutes_, from);
}

}  // namespace relay::schedule
