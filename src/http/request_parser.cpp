#include "http/request_parser.h"

#include <algorithm>

#include "common/hex.h"
#include "common/whole_number.h"
#include "http/syntax.h"

namespace relay::http {
namespace {

bool isToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), isTokenChar);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lowerAscii(c);
  return out;
}

ParsedHead fail(int status, std::string text) {
  ParsedHead parsed;
  parsed.error = status;
  parsed.error_text = std::move(text);
  return parsed;
}

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
  const std::string wanted = lower(name);
  for (const auto& [key, value] : headers) {
    if (key == wanted) return &value;
  }
  return nullptr;
}

std::optional<std::string> HttpRequest::param(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (percentDecode(pair.substr(0, eq)) != name) continue;
    return eq == std::string_view::npos ? std::string() : percentDecode(pair.substr(eq + 1));
  }
  return std::nullopt;
}

std::string percentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hexDigitValue(text[i + 1]) >= 0 &&
               hexDigitValue(text[i + 2]) >= 0) {
      out += static_cast<char>(hexDigitValue(text[i + 1]) * 16 + hexDigitValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::size_t headEnd(std::string_view buffer) {
  for (std::size_t i = buffer.find('\n'); i != std::string_view::npos;
       i = buffer.find('\n', i + 1)) {
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  return std::string_view::npos;
}

ParsedHead parseHead(std::string_view head, std::size_t max_headers, std::size_t max_body_bytes) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const std::size_t lf = head.find('\n');
    std::string_view line = head.substr(0, lf);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    head = lf == std::string_view::npos ? std::string_view() : head.substr(lf + 1);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return fail(400, "empty request");
  const std::string_view request_line = lines.front();
  const std::size_t first = request_line.find(' ');
  const std::size_t second =
      first == std::string_view::npos ? first : request_line.find(' ', first + 1);
  if (second == std::string_view::npos ||
      request_line.find(' ', second + 1) != std::string_view::npos) {
    return fail(400, "malformed request line");
  }
  ParsedHead parsed;
  HttpRequest& request = parsed.request;
  request.method = std::string(request_line.substr(0, first));
  std::string_view target = request_line.substr(first + 1, second - first - 1);
  const std::string_view version = request_line.substr(second + 1);
  if (!isToken(request.method)) return fail(400, "malformed method");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return version.substr(0, 5) == "HTTP/" ? fail(505, "only HTTP/1.1 and HTTP/1.0")
                                           : fail(400, "malformed HTTP version");
  }
  if (lines.size() - 1 > max_headers) return fail(431, "too many headers");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::size_t colon = line.find(':');
    // No obsolete line folding, no whitespace before the colon, a token as the name.
    if (colon == std::string_view::npos || !isToken(line.substr(0, colon))) {
      return fail(400, "malformed header line");
    }
    request.headers.emplace_back(lower(line.substr(0, colon)),
                                 std::string(trimWhitespace(line.substr(colon + 1))));
  }
  // Absolute form (`GET http://host/metrics`) is valid HTTP/1.1: keep only its path.
  if (target.substr(0, 7) == "http://") {
    const std::size_t slash = target.find('/', 7);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.empty() || target.front() != '/') return fail(400, "malformed request target");
  const std::size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) request.query = std::string(target.substr(question + 1));
  if (std::count_if(request.headers.begin(), request.headers.end(),
                    [](const auto& header) { return header.first == "host"; }) > 1) {
    return fail(400, "more than one Host header");
  }
  if (request.header("transfer-encoding") != nullptr) {
    // Chunked is a coding every HTTP/1.1 recipient understands (RFC 9112 section 7.1), so 501
    // would be the wrong refusal: this server reads Content-Length bodies only, which is 411
    // (RFC 9110 section 15.5.12).
    return fail(411, "Transfer-Encoding is not accepted: send the body with Content-Length");
  }
  if (const std::string* length = request.header("content-length")) {
    std::size_t value = 0;
    if (!parseWholeNumber(*length, value)) {
      return fail(400, "malformed Content-Length");
    }
    if (value > max_body_bytes) {
      return fail(413, "request body larger than " + std::to_string(max_body_bytes) + " bytes");
    }
    parsed.content_length = value;
  }
  return parsed;
}

}  // namespace relay::http
