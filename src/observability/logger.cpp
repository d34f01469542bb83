#include "observability/logger.h"

#include <nlohmann/json.hpp>

#include "common/printable.h"
#include "common/rfc3339.h"

namespace relay::observability {
namespace {

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

// Text values with spaces, quotes, `=` or control characters are quoted (JSON escapes the
// controls) so a line stays machine-splittable and one line.
std::string textValue(std::string_view value) {
  const bool plain = !value.empty() && value.find_first_of(" \"=") == std::string_view::npos &&
                     printable(value) == value;
  if (plain) return std::string(value);
  return nlohmann::json(std::string(value))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::optional<LogLevel> parseLogLevel(std::string_view text) {
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (text == levelName(level)) return level;
  }
  return std::nullopt;
}

std::optional<LogFormat> parseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return std::nullopt;
}

Logger::Logger(std::ostream& out, Clock& clock, LogLevel level, LogFormat format)
    : out_(out), clock_(clock), level_(level), format_(format) {}

void Logger::log(LogLevel level, std::string_view message, const LogFields& fields) {
  if (level < level_) return;
  write(levelName(level), message, fields);
}

void Logger::handlerOutput(std::string_view prefixed_line) {
  if (format_ == LogFormat::kText) {
    // Verbatim but for control characters: a handler cannot forge or hide a line's prefix.
    const std::string line = printable(prefixed_line, KeepControls::kTab) + '\n';
    std::lock_guard lock(mutex_);
    out_ << line;  // one write per line: never split from its newline
    out_.flush();
    return;
  }
  write("output", prefixed_line, {});
}

void Logger::write(std::string_view level, std::string_view message, const LogFields& fields) {
  std::string line;
  const std::string time = formatRfc3339Millis(clock_.now());
  if (format_ == LogFormat::kJson) {
    nlohmann::json record = {{"time", time}, {"level", level}, {"message", message}};
    for (const auto& [key, value] : fields) record[key] = value;
    line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    line = time + " " + std::string(level) + " " + printable(message, KeepControls::kTab);
    for (const auto& [key, value] : fields) line += " " + key + "=" + textValue(value);
  }
  line += '\n';
  std::lock_guard lock(mutex_);
  out_ << line;  // one write per line (stderr is unbuffered): never split from its newline
  out_.flush();
}

}  // namespace relay::observability
