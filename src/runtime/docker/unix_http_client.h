#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "runtime/docker/http_response_parser.h"

namespace relay::runtime::docker {

/// One HTTP request to the daemon. A non-empty body is sent as JSON.
struct HttpRequest {
  std::string method;
  std::string target;  // path and query, already percent-encoded
  std::string body;
};

/// A connection the daemon took over after its response headers (attach): from here on raw
/// bytes flow both ways. `buffered` holds raw bytes that arrived together with the headers.
struct HijackedConnection {
  UniqueFd fd;  // non-blocking
  std::string buffered;
};

/// Minimal HTTP/1.1 client over a unix socket, one connection per request, every wait bounded
/// by a deadline on the injected Clock. Stateless apart from its settings: thread-safe.
class UnixHttpClient {
 public:
  /// `socket_path` is where the daemon listens; `host_label` (the DOCKER_HOST value) only
  /// appears in error messages.
  UnixHttpClient(std::string socket_path, std::string host_label, Clock& clock);

  /// Sends `request` on a fresh connection and reads the whole response. Blocks until then or
  /// until `deadline` (kTimeout). kUnavailable when the daemon cannot be reached or drops the
  /// connection; kInternal on a malformed response. Any HTTP status is a success here.
  Result<HttpResponse> send(const HttpRequest& request, MonoTime deadline) const;

  /// Sends `request` asking to upgrade the connection (`Upgrade: tcp`) and returns the
  /// response headers and the connection. The status is not checked here.
  Result<std::pair<HttpResponse, HijackedConnection>> upgrade(const HttpRequest& request,
                                                              MonoTime deadline) const;

  const std::string& hostLabel() const { return host_label_; }
  Clock& clock() const { return clock_; }

 private:
  Result<UniqueFd> connect(MonoTime deadline) const;
  Status writeAll(int fd, std::string_view bytes, MonoTime deadline) const;
  /// Reads into `parser` until it completes; returns the bytes read past the message.
  Result<std::string> readResponse(int fd, HttpResponseParser& parser, MonoTime deadline) const;
  Error lost(std::string_view what, int error_number) const;

  std::string socket_path_;
  std::string host_label_;
  Clock& clock_;
};

/// Blocks until `fd` is ready for `events` or `deadline` passes. Returns the poll revents, 0 at
/// the deadline, or an Error (kIo) from poll.
Result<short> pollUntil(Clock& clock, int fd, short events, MonoTime deadline);

}  // namespace relay::runtime::docker
