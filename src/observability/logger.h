#pragma once

#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace relay::observability {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

std::optional<LogLevel> parseLogLevel(std::string_view text);
std::optional<LogFormat> parseLogFormat(std::string_view text);

/// Structured fields of one log line (message id, app, handler, attempt, outcome...).
using LogFields = std::vector<std::pair<std::string, std::string>>;

/// One line per event worth knowing: `text` for people, `json` (one object per line) for
/// machines. Thread-safe; lines never interleave. Never give it secrets.
class Logger {
 public:
  Logger(std::ostream& out, Clock& clock, LogLevel level = LogLevel::kInfo,
         LogFormat format = LogFormat::kText);

  void log(LogLevel level, std::string_view message, const LogFields& fields = {});
  void debug(std::string_view message, const LogFields& fields = {}) {
    log(LogLevel::kDebug, message, fields);
  }
  void info(std::string_view message, const LogFields& fields = {}) {
    log(LogLevel::kInfo, message, fields);
  }
  void warn(std::string_view message, const LogFields& fields = {}) {
    log(LogLevel::kWarn, message, fields);
  }
  void error(std::string_view message, const LogFields& fields = {}) {
    log(LogLevel::kError, message, fields);
  }
  /// A handler's output line (already `[app/handler] `-prefixed): written at every level,
  /// verbatim in text format but for control characters other than tab, which are escaped
  /// (`\x1B`, see printable()); as the `message` of an `output` record in json.
  void handlerOutput(std::string_view prefixed_line);

 private:
  void write(std::string_view level, std::string_view message, const LogFields& fields);

  std::mutex mutex_;
  std::ostream& out_;
  Clock& clock_;
  LogLevel level_;
  LogFormat format_;
};

}  // namespace relay::observability
