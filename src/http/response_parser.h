#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace relay::http {

/// A parsed HTTP/1.1 response: status, headers (names as sent) and the decoded body.
struct Response {
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  /// The first header named `name` (case-insensitive), or empty.
  std::string_view header(std::string_view name) const;
};

/// Size caps of one response.
struct ResponseLimits {
  std::size_t max_header_bytes = 64 * 1024;
  std::size_t max_body_bytes = 16 * 1024 * 1024;
};

/// Incremental parser of one HTTP/1.1 response (Docker's daemon, a worker's endpoints): a body
/// delimited by Content-Length, by chunked transfer coding or by the end of the connection. Bytes
/// may arrive split anywhere. Header and body sizes are capped so a misbehaving peer cannot grow
/// memory without bound. Not thread-safe.
class ResponseParser {
 public:
  /// What ends the message.
  enum class Mode {
    kFull,         // status line, headers and body
    kHeadersOnly,  // stop after the headers: the rest is a hijacked raw stream (attach)
  };

  explicit ResponseParser(Mode mode = Mode::kFull, ResponseLimits limits = {});

  /// Receives the body of a 2xx response piece by piece instead of Response::body, with no size
  /// cap (a Docker image export is as large as the image); an Error from it is final. The body
  /// of any other status is kept in Response::body as usual, capped.
  using BodySink = std::function<Status(std::string_view)>;
  void streamBodyTo(BodySink sink) { body_sink_ = std::move(sink); }

  /// Consumes bytes and returns how many were used: all of them until the message is complete,
  /// fewer when it completes inside `bytes` (the rest belongs to whatever follows). An Error
  /// (kInternal, saying what was malformed) is final.
  Result<std::size_t> feed(std::string_view bytes);
  /// The peer closed the connection: completes a body delimited by the close, and is an Error
  /// when the message is otherwise incomplete.
  Status finish();

  bool complete() const { return state_ == State::kDone; }
  const Response& response() const { return response_; }
  Response takeResponse() { return std::move(response_); }

 private:
  enum class State {
    kHeaders,
    kBodyLength,
    kBodyUntilClose,
    kChunkSize,
    kChunkData,
    kChunkDataEnd,
    kTrailers,
    kDone,
    kFailed
  };

  Status parseHead(std::string_view head);
  Status startBody();
  Status appendBody(std::string_view bytes);
  /// Whether the body goes to body_sink_ (set, and a 2xx status).
  bool streaming() const;
  Error fail(std::string message);

  Mode mode_;
  ResponseLimits limits_;
  State state_ = State::kHeaders;
  std::string line_;  // the partial head, chunk-size line or trailer line
  std::size_t remaining_ = 0;
  Response response_;
  BodySink body_sink_;
};

}  // namespace relay::http
