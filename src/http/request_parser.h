#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::http {

/// One parsed HTTP request as a handler sees it.
struct HttpRequest {
  std::string method;
  std::string path;   // the target's path, as sent (no percent-decoding; routes match exactly)
  std::string query;  // after `?`, raw; empty when none
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;                                          // Content-Length bytes; no chunked
  std::string peer;  // the client's address (numeric, without the port) as the server saw it

  /// The value of the first header named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
  /// The percent-decoded value of query parameter `name` (`+` is a space), or nullopt when the
  /// query does not name it. The first occurrence wins.
  std::optional<std::string> param(std::string_view name) const;
};

/// Decodes `%XX` escapes and `+` (application/x-www-form-urlencoded). A malformed escape is
/// kept as it is.
std::string percentDecode(std::string_view text);

/// Where the head of a request ends (just past its blank line), or npos while incomplete. Bare
/// LF line ends are tolerated (RFC 9112 section 2.2).
std::size_t headEnd(std::string_view buffer);

/// The request line and headers, parsed: either an HTTP status to answer at once (400, 431,
/// 505...) or a request without its body and the body's length.
struct ParsedHead {
  int error = 0;  // an HTTP status when the head is unacceptable
  std::string error_text;
  HttpRequest request;
  std::size_t content_length = 0;
};

/// Parses a complete head (up to headEnd()). At most `max_headers` headers (431 beyond); a
/// body larger than `max_body_bytes` is 413 and `Transfer-Encoding` is 411 (only
/// Content-Length bodies are read).
ParsedHead parseHead(std::string_view head, std::size_t max_headers, std::size_t max_body_bytes);

}  // namespace relay::http
