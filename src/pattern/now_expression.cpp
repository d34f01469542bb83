#include "pattern/now_expression.h"

#include <cctype>
#include <string>

#include "common/duration.h"
#include "common/rfc3339.h"

namespace relay::pattern {
namespace {

constexpr std::string_view kExpected =
    "expected now(), now()-5m, now()+10m or a compound offset like now()-1h30m "
    "(units h, m, s, ms; no spaces)";

Error bad(std::string_view text, std::string_view why) {
  std::string message = "invalid temporal operand \"" + std::string(text) + "\"";
  if (!why.empty()) message += ": " + std::string(why);
  return Error::invalid(message + "; " + std::string(kExpected));
}

bool looksLikeTimestamp(std::string_view text) {
  if (parseRfc3339(text)) return true;
  // A date alone or a timestamp without offset: four digits then '-'.
  return text.size() >= 5 && std::isdigit(static_cast<unsigned char>(text[0])) &&
         std::isdigit(static_cast<unsigned char>(text[1])) &&
         std::isdigit(static_cast<unsigned char>(text[2])) &&
         std::isdigit(static_cast<unsigned char>(text[3])) && text[4] == '-';
}

bool startsWithNowWord(std::string_view text) {
  if (text.size() < 3) return false;
  return std::tolower(static_cast<unsigned char>(text[0])) == 'n' &&
         std::tolower(static_cast<unsigned char>(text[1])) == 'o' &&
         std::tolower(static_cast<unsigned char>(text[2])) == 'w';
}

}  // namespace

Result<std::chrono::milliseconds> parseNowExpression(std::string_view text) {
  constexpr std::string_view kNow = "now()";
  if (text.substr(0, kNow.size()) != kNow) {
    if (looksLikeTimestamp(text)) {
      return bad(text, "a literal timestamp is not accepted, only a cut-off relative to now()");
    }
    if (startsWithNowWord(text)) return bad(text, "write now() exactly, with parentheses");
    return bad(text, "");
  }
  const std::string_view rest = text.substr(kNow.size());
  if (rest.empty()) return std::chrono::milliseconds(0);
  if (rest[0] != '-' && rest[0] != '+') {
    if (rest[0] == ' ') return bad(text, "no spaces allowed");
    return bad(text, "expected - or + after now()");
  }
  const std::string_view offset = rest.substr(1);
  if (offset.empty()) return bad(text, "missing duration after " + std::string(1, rest[0]));
  for (const char c : offset) {
    if (c == ' ') return bad(text, "no spaces allowed");
    if (c == 'd') return bad(text, "unit d is not allowed in a cut-off");
  }
  if (offset == "0") return bad(text, "the duration needs a unit");
  const Result<Millis> duration = parseDuration(offset);
  if (!duration) return bad(text, "\"" + std::string(offset) + "\" is not a duration");
  return rest[0] == '-' ? -*duration : *duration;
}

}  // namespace relay::pattern
