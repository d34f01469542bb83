#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace relay::schedule {

/// One minute on the wall clock of some timezone, as the cron fields see it.
struct CivilMinute {
  int year = 1970;
  unsigned month = 1;    // 1-12
  unsigned day = 1;      // 1-31
  unsigned hour = 0;     // 0-23
  unsigned minute = 0;   // 0-59
  unsigned weekday = 4;  // 0 = Sunday ... 6 = Saturday
};

/// A parsed 5-field cron expression (Vixie cron dialect); an immutable value.
class CronExpression {
 public:
  /// 5 fields (minute hour day-of-month month day-of-week) with *, lists, ranges, steps (*/15,
  /// 1-30/5, 5/10), names jan-dec and sun-sat (case-insensitive), 7 = Sunday, and @hourly
  /// @daily @midnight @weekly @monthly @yearly @annually. The error message names the field and
  /// what was expected, e.g. `day-of-month "32" is out of range 1-31`.
  static Result<CronExpression> parse(std::string_view text);

  /// The expression as written (surrounding whitespace removed).
  const std::string& text() const { return text_; }

  /// Whether the civil minute matches, with the Vixie rule for the two day fields: when both are
  /// restricted (neither starts with `*`) either may match, otherwise both must.
  bool matchesLocal(const CivilMinute& when) const;

  /// The calendar part of matchesLocal: month, then the day fields with the OR rule.
  bool matchesMonth(unsigned month) const;
  bool matchesDay(unsigned day_of_month, unsigned weekday) const;

  /// The smallest allowed hour (minute) that is >= `from`, or nullopt when there is none.
  std::optional<unsigned> nextHour(unsigned from) const;
  std::optional<unsigned> nextMinute(unsigned from) const;

 private:
  CronExpression() = default;

  std::string text_;
  std::uint64_t minutes_ = 0;        // bit m set: minute m allowed (0-59)
  std::uint32_t hours_ = 0;          // bit h: hour h (0-23)
  std::uint32_t days_of_month_ = 0;  // bit d: day d (1-31)
  std::uint32_t months_ = 0;         // bit m: month m (1-12)
  std::uint32_t days_of_week_ = 0;   // bit d: weekday d (0-6, Sunday = 0; 7 folds into 0)
  bool day_of_month_star_ = false;   // the field starts with '*' (Vixie's DOM_STAR)
  bool day_of_week_star_ = false;    // the field starts with '*' (Vixie's DOW_STAR)
};

}  // namespace relay::schedule
