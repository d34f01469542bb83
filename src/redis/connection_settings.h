#pragma once

#include <chrono>

namespace relay::redis {

/// Timeouts of one Connection.
struct ConnectionSettings {
  /// Bound on establishing the TCP/unix connection (AUTH and SELECT count as commands).
  /// Zero: as long as the operating system takes.
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(5);
  /// Bound on each blocking socket read or write of a command. Zero: wait forever. Must be
  /// longer than any server-side block the caller asks for (XREADGROUP BLOCK, BLPOP).
  std::chrono::milliseconds command_timeout = std::chrono::seconds(10);
};

}  // namespace relay::redis
