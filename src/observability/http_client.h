#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "observability/http_address.h"

namespace relay::observability {

/// The status and body of one HTTP response.
struct HttpGetResponse {
  int status = 0;
  std::string body;
};

/// GETs `path` from a Relay worker's HTTP endpoint (`relay health`): one request on a fresh
/// connection (`Connection: close`), read to the end, at most 1 MiB. Blocks until then or
/// `timeout` on `clock` (kTimeout). kUnavailable when nothing listens there or the connection
/// breaks; kInternal for a response that is not HTTP. Any status is a success here.
Result<HttpGetResponse> httpGet(const HttpAddress& address, std::string_view path,
                                std::chrono::milliseconds timeout, Clock& clock);

}  // namespace relay::observability
