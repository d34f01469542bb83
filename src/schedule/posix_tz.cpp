#include "schedule/posix_tz.h"

#include <algorithm>
#include <array>
#include <string>

namespace relay::schedule {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

/// Reads a TZ string left to right; every read either advances or reports what it expected.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool atEnd() const { return pos_ == text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  bool consume(char c) {
    if (atEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  Error fail(std::string_view expected) const {
    return Error::invalid("TZ rule \"" + std::string(text_) + "\": expected " +
                          std::string(expected) + " at position " + std::to_string(pos_ + 1));
  }

  /// `<...>` of letters, digits, '+' and '-', or a run of letters; at least 3 characters.
  Result<std::string_view> name() {
    const std::size_t start = pos_;
    if (consume('<')) {
      while (!atEnd() && isQuotedNameChar(peek())) ++pos_;
      const std::size_t length = pos_ - start - 1;
      if (!consume('>')) return fail("'>' closing a quoted zone name");
      if (length < 3) return fail("a zone name of at least 3 characters");
      return text_.substr(start + 1, length);
    }
    while (!atEnd() && isLetter(peek())) ++pos_;
    if (pos_ - start < 3) {
      pos_ = start;
      return fail("a zone name of at least 3 letters");
    }
    return text_.substr(start, pos_ - start);
  }

  /// `[+-]hh[:mm[:ss]]` with hh up to `max_hours`.
  Result<seconds> signedTime(unsigned max_hours) {
    bool negative = false;
    if (consume('-')) {
      negative = true;
    } else {
      (void)consume('+');
    }
    auto hh = number(3, max_hours, "hours");
    if (!hh.ok()) return hh.error();
    seconds total = hours(*hh);
    if (consume(':')) {
      auto mm = number(2, 59, "minutes 00-59");
      if (!mm.ok()) return mm.error();
      total += minutes(*mm);
      if (consume(':')) {
        auto ss = number(2, 59, "seconds 00-59");
        if (!ss.ok()) return ss.error();
        total += seconds(*ss);
      }
    }
    return negative ? -total : total;
  }

  /// 1 to `max_digits` digits with a value in 0..`max`.
  Result<unsigned> number(std::size_t max_digits, unsigned max, std::string_view what) {
    const std::size_t start = pos_;
    unsigned value = 0;
    while (!atEnd() && pos_ - start < max_digits && peek() >= '0' && peek() <= '9') {
      value = value * 10 + static_cast<unsigned>(peek() - '0');
      ++pos_;
    }
    if (pos_ == start || value > max) {
      pos_ = start;
      return fail(std::string(what) + " (0-" + std::to_string(max) + ")");
    }
    return value;
  }

 private:
  static bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
  static bool isQuotedNameChar(char c) {
    return isLetter(c) || (c >= '0' && c <= '9') || c == '+' || c == '-';
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

// POSIX allows offsets of up to 24 hours; RFC 8536 lets transition times range over -167..167.
constexpr unsigned kMaxOffsetHours = 24;
constexpr unsigned kMaxTransitionHours = 167;

}  // namespace

Result<PosixTz> PosixTz::parse(std::string_view text) {
  Cursor cursor(text);
  PosixTz tz;
  if (auto std_name = cursor.name(); !std_name.ok()) return std_name.error();
  auto std_offset = cursor.signedTime(kMaxOffsetHours);
  if (!std_offset.ok()) return std_offset.error();
  tz.std_offset_ = -*std_offset;  // POSIX counts hours west of Greenwich
  if (cursor.atEnd()) return tz;

  if (auto dst_name = cursor.name(); !dst_name.ok()) return dst_name.error();
  Dst dst;
  dst.offset = tz.std_offset_ + hours(1);
  if (cursor.atEnd()) return cursor.fail("',' and a transition rule (Jn, n or Mm.w.d)");
  if (cursor.peek() != ',') {
    auto dst_offset = cursor.signedTime(kMaxOffsetHours);
    if (!dst_offset.ok()) return dst_offset.error();
    dst.offset = -*dst_offset;
  }

  for (Transition* transition : {&dst.start, &dst.end}) {
    if (!cursor.consume(',')) return cursor.fail("',' and a transition rule (Jn, n or Mm.w.d)");
    if (cursor.consume('J')) {
      auto day = cursor.number(3, 365, "a day of the year");
      if (!day.ok()) return day.error();
      if (*day < 1) return cursor.fail("a Julian day 1-365");
      transition->kind = Transition::Kind::kJulianNoLeap;
      transition->day = *day;
    } else if (cursor.consume('M')) {
      auto month = cursor.number(2, 12, "a month");
      if (!month.ok()) return month.error();
      if (*month < 1) return cursor.fail("a month 1-12");
      if (!cursor.consume('.')) return cursor.fail("'.' after the month");
      auto week = cursor.number(1, 5, "a week");
      if (!week.ok()) return week.error();
      if (*week < 1) return cursor.fail("a week 1-5");
      if (!cursor.consume('.')) return cursor.fail("'.' after the week");
      auto weekday = cursor.number(1, 6, "a weekday");
      if (!weekday.ok()) return weekday.error();
      transition->kind = Transition::Kind::kMonthWeekDay;
      transition->month = *month;
      transition->week = *week;
      transition->weekday = *weekday;
    } else {
      auto day = cursor.number(3, 365, "a transition rule (Jn, n or Mm.w.d)");
      if (!day.ok()) return day.error();
      transition->kind = Transition::Kind::kZeroBasedDay;
      transition->day = *day;
    }
    if (cursor.consume('/')) {
      auto time = cursor.signedTime(kMaxTransitionHours);
      if (!time.ok()) return time.error();
      transition->time = *time;
    }
  }
  if (!cursor.atEnd()) return cursor.fail("the end of the rule");
  tz.dst_ = dst;
  return tz;
}

date::local_seconds PosixTz::Transition::in(date::year year) const {
  date::local_days when;
  switch (kind) {
    case Kind::kJulianNoLeap: {
      // Jn counts 1-365 and never names February 29: from March on, a leap year shifts by one.
      const unsigned leap_shift = (year.is_leap() && day >= 60) ? 1 : 0;
      when = date::local_days{year / date::January / 1} + date::days(day - 1 + leap_shift);
      break;
    }
    case Kind::kZeroBasedDay:
      when = date::local_days{year / date::January / 1} + date::days(day);
      break;
    case Kind::kMonthWeekDay: {
      const date::weekday wd{weekday};
      const date::month m{month};
      when = week == 5 ? date::local_days{year / m / wd[date::last]}
                       : date::local_days{year / m / wd[week]};
      break;
    }
  }
  return when + time;
}

seconds PosixTz::offsetAt(date::sys_seconds instant) const {
  if (!dst_) return std_offset_;
  // The switches of the two years before and the one after bracket `instant` however far the
  // transition times (up to ±167 h) push them across a year boundary.
  struct Switch {
    date::sys_seconds at;
    bool to_dst;
  };
  std::array<Switch, 8> switches{};
  const date::year year =
      date::year_month_day{date::floor<date::days>(instant + std_offset_)}.year();
  std::size_t n = 0;
  for (int delta = -2; delta <= 1; ++delta) {
    const date::year y = year + date::years(delta);
    // Each switch happens at a wall-clock time read in the offset in effect before it.
    switches[n++] = {date::sys_seconds{dst_->start.in(y).time_since_epoch() - std_offset_}, true};
    switches[n++] = {date::sys_seconds{dst_->end.in(y).time_since_epoch() - dst_->offset}, false};
  }
  // At equal instants the switch to standard time comes first, so that a rule such as
  // `J1/0,J365/25` (DST all year) ends one year's DST exactly when the next one's starts.
  std::sort(switches.begin(), switches.end(), [](const Switch& a, const Switch& b) {
    return a.at != b.at ? a.at < b.at : (!a.to_dst && b.to_dst);
  });
  bool in_dst = !switches.front().to_dst;
  for (const Switch& s : switches) {
    if (s.at > instant) break;
    in_dst = s.to_dst;
  }
  return in_dst ? dst_->offset : std_offset_;
}

}  // namespace relay::schedule
