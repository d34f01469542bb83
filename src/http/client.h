#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "http/address.h"
#include "http/response_parser.h"

namespace relay::http {

/// One HTTP request. A non-empty body is sent as JSON.
struct Request {
  std::string method;
  std::string target;  // path and query, already percent-encoded
  std::string body;
};

/// A connection the peer took over after its response headers (Docker's attach): from here on
/// raw bytes flow both ways. `buffered` holds raw bytes that arrived together with the headers.
struct HijackedConnection {
  UniqueFd fd;  // non-blocking
  std::string buffered;
};

/// Where a Client connects: a TCP host and port, or a unix socket path.
struct UnixSocket {
  std::string path;
};
using Endpoint = std::variant<Address, UnixSocket>;

/// The one HTTP/1.1 client of Relay (`relay health` over TCP, the Docker Engine API over a unix
/// socket): one connection per request (`Connection: close`), the response read by
/// ResponseParser (Content-Length, chunked or until the close; sizes capped), every wait bounded
/// by a deadline on the injected Clock. Stateless apart from its settings: thread-safe.
class Client {
 public:
  /// `peer` names the other side in every error message ("docker daemon at unix:///...");
  /// empty means the endpoint itself (`127.0.0.1:9464`, the socket path).
  Client(Endpoint endpoint, Clock& clock, std::string peer = {});

  /// Sends `request` on a fresh connection and reads the whole response. Blocks until then or
  /// until `deadline` (kTimeout). kUnavailable when nothing can be reached there or the peer
  /// drops the connection; kInternal on a malformed or oversized response. Any HTTP status is a
  /// success here.
  Result<Response> send(const Request& request, MonoTime deadline) const;

  /// The same, passing the body of a 2xx response to `sink` as it arrives instead of keeping
  /// it (ResponseParser::streamBodyTo): for bodies of any size. The returned Response has the
  /// status and headers, and the body only when the status is not 2xx.
  Result<Response> send(const Request& request, MonoTime deadline,
                        ResponseParser::BodySink sink) const;

  /// Sends `request` asking to upgrade the connection (`Upgrade: tcp`) and returns the
  /// response headers and the connection. The status is not checked here.
  Result<std::pair<Response, HijackedConnection>> upgrade(const Request& request,
                                                          MonoTime deadline) const;

  const std::string& peer() const { return peer_; }
  Clock& clock() const { return clock_; }

 private:
  Result<UniqueFd> connect(MonoTime deadline) const;
  Result<UniqueFd> connectUnix(const UnixSocket& socket, MonoTime deadline) const;
  Result<UniqueFd> connectTcp(const Address& address, MonoTime deadline) const;
  Status writeAll(int fd, std::string_view bytes, MonoTime deadline) const;
  /// Reads into `parser` until it completes; returns the bytes read past the message.
  Result<std::string> readResponse(int fd, ResponseParser& parser, MonoTime deadline) const;
  Result<std::pair<Response, HijackedConnection>> exchange(
      const Request& request, bool upgrade, MonoTime deadline,
      ResponseParser::BodySink sink = {}) const;
  Error lost(std::string_view what, int error_number) const;

  Endpoint endpoint_;
  Clock& clock_;
  std::string peer_;
};

/// `GET path` from a TCP endpoint within `timeout` on `clock` (`relay health`, test probes).
Result<Response> get(const Address& address, std::string_view path,
                     std::chrono::milliseconds timeout, Clock& clock);

}  // namespace relay::http
