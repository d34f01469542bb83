#include "event/number.h"

#include <charconv>
#include <cstdint>
#include <limits>

namespace relay::event::detail {
namespace {

constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Decimal exponent of the first non-zero digit of a valid unsigned JSON number (which is not
// zero): positive means the magnitude is at least 10.
std::int64_t magnitude(std::string_view text) {
  std::size_t i = 0;
  std::int64_t position = 0;
  while (i < text.size() && text[i] == '0') ++i;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] == '0') ++i, --position;
  } else {
    while (i < text.size() && isDigit(text[i])) ++i, ++position;
    if (i < text.size() && text[i] == '.') ++i;
  }
  while (i < text.size() && isDigit(text[i])) ++i;
  std::int64_t exponent = 0;
  if (i < text.size() && (text[i] | 0x20) == 'e') {
    ++i;
    const bool negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    while (i < text.size() && isDigit(text[i])) {
      if (exponent < 1'000'000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (negative) exponent = -exponent;
  }
  return position + exponent;
}

}  // namespace

double parseJsonNumber(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  // Clinger's fast path: up to 19 digits with the value below 2^53 and a power of ten within
  // 10^±22 is one exact multiplication or division, so correctly rounded.
  std::uint64_t mantissa = 0;
  std::size_t digits = 0;
  std::int64_t fraction = 0;
  std::size_t i = 0;
  while (i < text.size() && isDigit(text[i])) {
    mantissa = mantissa * 10 + static_cast<std::uint64_t>(text[i++] - '0');
    ++digits;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && isDigit(text[i])) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(text[i++] - '0');
      ++digits;
      ++fraction;
    }
  }
  std::int64_t exponent = 0;
  bool exponent_overflow = false;
  if (i < text.size() && (text[i] | 0x20) == 'e') {
    ++i;
    const bool exponent_negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    while (i < text.size() && isDigit(text[i])) {
      if (exponent < 1'000'000) {
        exponent = exponent * 10 + (text[i] - '0');
      } else {
        exponent_overflow = true;
      }
      ++i;
    }
    if (exponent_negative) exponent = -exponent;
  }
  double value;
  const std::int64_t power = exponent - fraction;
  if (digits <= 19 && mantissa <= (std::uint64_t{1} << 53) && power >= -22 && power <= 22 &&
      !exponent_overflow) {
    value = static_cast<double>(mantissa);
    value = power < 0 ? value / kPowersOfTen[-power] : value * kPowersOfTen[power];
  } else if (mantissa == 0 && digits <= 19) {
    value = 0;
  } else {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      value = magnitude(text) > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    } else if (ec != std::errc()) {
      value = 0;  // unreachable for tokens the decoder accepted
    }
  }
  if (value == 0) return 0.0;  // -0 is 0
  return negative ? -value : value;
}

}  // namespace relay::event::detail
