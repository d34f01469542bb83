#include "common/rfc3339.h"

#include <chrono>
#include <cstdio>

namespace relay {
namespace {

// Reads exactly `count` ASCII digits at text[pos...]; false when any is not a digit.
bool readDigits(std::string_view text, std::size_t pos, std::size_t count, int& out) {
  if (pos + count > text.size()) return false;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  out = value;
  return true;
}

bool isLeap(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int daysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && isLeap(year) ? 29 : kDays[month - 1];
}

std::string format(WallTime time, bool millis) {
  using namespace std::chrono;
  const auto day = floor<days>(time);
  const year_month_day ymd(day);
  const hh_mm_ss hms(floor<milliseconds>(time - day));
  char buffer[40];
  const int year = static_cast<int>(ymd.year());
  const unsigned month = static_cast<unsigned>(ymd.month());
  const unsigned mday = static_cast<unsigned>(ymd.day());
  const auto hours = hms.hours().count();
  const auto minutes = hms.minutes().count();
  const auto seconds = static_cast<long long>(hms.seconds().count());
  if (millis) {
    std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02lld.%03lldZ", year, month,
                  mday, static_cast<int>(hours), static_cast<int>(minutes), seconds,
                  static_cast<long long>(hms.subseconds().count()));
  } else {
    std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02lldZ", year, month, mday,
                  static_cast<int>(hours), static_cast<int>(minutes), seconds);
  }
  return buffer;
}

}  // namespace

Instant Instant::fromWallTime(WallTime time) {
  // Spelled out: inside Instant, `seconds` names the member, not std::chrono::seconds.
  const auto since = time.time_since_epoch();
  const auto secs = std::chrono::floor<std::chrono::seconds>(since);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since - secs);
  return {secs.count(), static_cast<std::int32_t>(nanos.count())};
}

std::optional<Instant> parseRfc3339(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!readDigits(text, 0, 4, year) || text.size() < 20 || text[4] != '-' ||
      !readDigits(text, 5, 2, month) || text[7] != '-' || !readDigits(text, 8, 2, day) ||
      (text[10] != 'T' && text[10] != 't') || !readDigits(text, 11, 2, hour) || text[13] != ':' ||
      !readDigits(text, 14, 2, minute) || text[16] != ':' || !readDigits(text, 17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return std::nullopt;
  }
  std::size_t pos = 19;
  std::int32_t nanos = 0;
  if (text[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 9) nanos = nanos * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (std::size_t d = digits; d < 9; ++d) nanos *= 10;
  }
  if (pos >= text.size()) return std::nullopt;
  int offset_seconds = 0;
  if (text[pos] == 'Z' || text[pos] == 'z') {
    ++pos;
  } else if (text[pos] == '+' || text[pos] == '-') {
    int off_hour = 0, off_minute = 0;
    if (!readDigits(text, pos + 1, 2, off_hour) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !readDigits(text, pos + 4, 2, off_minute) || off_hour > 23 || off_minute > 59) {
      return std::nullopt;
    }
    offset_seconds = (off_hour * 3600 + off_minute * 60) * (text[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  using namespace std::chrono;
  const sys_days date =
      year_month_day(std::chrono::year(year), std::chrono::month(month), std::chrono::day(day));
  const std::int64_t seconds = static_cast<std::int64_t>(date.time_since_epoch().count()) * 86400 +
                               hour * 3600 + minute * 60 + second - offset_seconds;
  return Instant{seconds, nanos};
}

std::string formatRfc3339(WallTime time) { return format(time, false); }

std::string formatRfc3339Millis(WallTime time) { return format(time, true); }

std::string formatInstant(Instant instant) {
  using namespace std::chrono;
  const sys_seconds at{seconds(instant.seconds)};
  const auto day = floor<days>(at);
  const year_month_day ymd(day);
  const hh_mm_ss hms(at - day);
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02lldZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
                static_cast<int>(hms.minutes().count()),
                static_cast<long long>(hms.seconds().count()));
  return buffer;
}

}  // namespace relay
