#pragma once

#include <regex>
#include <string>

#include "http/address.h"

namespace relay::testing {

/// Where a worker serves /metrics, /healthz and /readyz, read from its "relay started" log line
/// (`http=127.0.0.1:PORT` in text format, `"http":"127.0.0.1:PORT"` in JSON): what a test needs
/// when the worker was started with RELAY_HTTP_ADDR=127.0.0.1:0. Port 0 while the line is not
/// there.
inline http::Address httpAddressInLog(const std::string& log) {
  std::smatch match;
  if (!std::regex_search(log, match, std::regex("http\"?[=:]\"?127\\.0\\.0\\.1:([0-9]+)"))) {
    return {"127.0.0.1", 0};
  }
  return {"127.0.0.1", std::stoi(match[1])};
}

}  // namespace relay::testing
