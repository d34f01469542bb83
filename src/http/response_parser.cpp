#include "http/response_parser.h"

#include <algorithm>

#include "common/printable.h"
#include "common/whole_number.h"
#include "http/syntax.h"

namespace relay::http {
namespace {

constexpr std::size_t kMaxChunkLineBytes = 1024;

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](char x, char y) { return lowerAscii(x) == lowerAscii(y); });
}

// Quotes a peer's bytes for an error message without letting control characters through.
std::string quoted(std::string_view text) {
  return "'" + printable(text.substr(0, 80)) + (text.size() > 80 ? "..." : "") + "'";
}

}  // namespace

std::string_view Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (equalsIgnoreCase(key, name)) return value;
  }
  return {};
}

ResponseParser::ResponseParser(Mode mode, ResponseLimits limits) : mode_(mode), limits_(limits) {}

Error ResponseParser::fail(std::string message) {
  state_ = State::kFailed;
  return Error::internal("malformed HTTP response: " + std::move(message));
}

Result<std::size_t> ResponseParser::feed(std::string_view bytes) {
  const std::size_t total = bytes.size();
  while (!bytes.empty()) {
    switch (state_) {
      case State::kFailed:
        return Error::internal("HTTP response parser used after an error");
      case State::kDone:
        return total - bytes.size();
      case State::kHeaders: {
        // Search only where the terminator can newly appear, so a slow peer costs O(n).
        const std::size_t old_size = line_.size();
        // line_ never holds more than the cap (checked below), so there is always room.
        const std::size_t take = std::min(bytes.size(), limits_.max_header_bytes + 4 - old_size);
        line_.append(bytes.substr(0, take));
        const std::size_t from = old_size >= 3 ? old_size - 3 : 0;
        const std::size_t end = line_.find("\r\n\r\n", from);
        if (end == std::string::npos) {
          if (line_.size() > limits_.max_header_bytes) {
            return fail("headers exceed " + std::to_string(limits_.max_header_bytes) + " bytes");
          }
          bytes.remove_prefix(take);
          break;
        }
        const std::size_t used = end + 4 - old_size;
        bytes.remove_prefix(used);
        std::string head = line_.substr(0, end);
        line_.clear();
        if (auto status = parseHead(head); !status) return status.error();
        if (auto status = startBody(); !status) return status.error();
        break;
      }
      case State::kBodyLength: {
        const std::size_t take = std::min(bytes.size(), remaining_);
        if (auto status = appendBody(bytes.substr(0, take)); !status) return status.error();
        bytes.remove_prefix(take);
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::kDone;
        break;
      }
      case State::kBodyUntilClose:
        if (auto status = appendBody(bytes); !status) return status.error();
        bytes = {};
        break;
      case State::kChunkSize:
      case State::kTrailers: {
        const std::size_t newline = bytes.find('\n');
        const std::size_t take = newline == std::string_view::npos ? bytes.size() : newline + 1;
        const std::size_t cap =
            state_ == State::kChunkSize ? kMaxChunkLineBytes : limits_.max_header_bytes;
        if (line_.size() + take > cap) return fail("chunk-size or trailer line too long");
        line_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
        if (newline == std::string_view::npos) break;
        if (line_.size() < 2 || line_[line_.size() - 2] != '\r') {
          return fail("line not terminated by CRLF: " + quoted(line_));
        }
        std::string_view line(line_.data(), line_.size() - 2);
        if (state_ == State::kTrailers) {
          if (line.empty()) state_ = State::kDone;
          line_.clear();
          break;
        }
        line = trimWhitespace(line.substr(0, line.find(';')));
        std::size_t size = 0;
        if (!parseWholeNumber(line, size, 16)) {
          return fail("bad chunk size " + quoted(line));
        }
        if (!streaming() && size > limits_.max_body_bytes - response_.body.size()) {
          return fail("body exceeds " + std::to_string(limits_.max_body_bytes) + " bytes");
        }
        line_.clear();
        remaining_ = size;
        state_ = size == 0 ? State::kTrailers : State::kChunkData;
        break;
      }
      case State::kChunkData: {
        const std::size_t take = std::min(bytes.size(), remaining_);
        if (auto status = appendBody(bytes.substr(0, take)); !status) return status.error();
        bytes.remove_prefix(take);
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::kChunkDataEnd;
        break;
      }
      case State::kChunkDataEnd: {
        line_ += bytes.front();
        bytes.remove_prefix(1);
        if (line_.size() < 2) break;
        if (line_ != "\r\n") return fail("chunk data not followed by CRLF");
        line_.clear();
        state_ = State::kChunkSize;
        break;
      }
    }
  }
  return total;
}

Status ResponseParser::finish() {
  switch (state_) {
    case State::kDone:
      return {};
    case State::kBodyUntilClose:
      state_ = State::kDone;
      return {};
    case State::kFailed:
      return Error::internal("HTTP response parser used after an error");
    case State::kHeaders:
      if (line_.empty()) return fail("connection closed before any response");
      return fail("connection closed inside the response headers");
    default:
      return fail("connection closed before the end of the response body");
  }
}

Status ResponseParser::parseHead(std::string_view head) {
  std::size_t line_end = head.find("\r\n");
  std::string_view status_line = head.substr(0, line_end);
  // HTTP/1.x SP 3DIGIT SP reason
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    return fail("bad status line " + quoted(status_line));
  }
  int status = 0;
  if (!parseWholeNumber(status_line.substr(9, 3), status) || status < 100) {
    return fail("bad status code in " + quoted(status_line));
  }
  response_.status = status;
  response_.reason = status_line.size() > 13 ? std::string(status_line.substr(13)) : "";

  while (line_end != std::string_view::npos) {
    head.remove_prefix(line_end + 2);
    line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return fail("bad header line " + quoted(line));
    }
    const std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), isTokenChar)) {
      return fail("bad header name " + quoted(name));
    }
    response_.headers.emplace_back(std::string(name),
                                   std::string(trimWhitespace(line.substr(colon + 1))));
  }
  return {};
}

Status ResponseParser::startBody() {
  const int status = response_.status;
  if (mode_ == Mode::kHeadersOnly || status < 200 || status == 204 || status == 304) {
    state_ = State::kDone;
    return {};
  }
  const std::string_view encoding = response_.header("Transfer-Encoding");
  if (!encoding.empty()) {
    const std::size_t comma = encoding.rfind(',');
    const std::string_view last =
        trimWhitespace(comma == std::string_view::npos ? encoding : encoding.substr(comma + 1));
    state_ = equalsIgnoreCase(last, "chunked") ? State::kChunkSize : State::kBodyUntilClose;
    return {};
  }
  bool have_length = false;
  for (const auto& [name, value] : response_.headers) {
    if (!equalsIgnoreCase(name, "Content-Length")) continue;
    std::size_t length = 0;
    if (!parseWholeNumber(value, length)) {
      return fail("bad Content-Length " + quoted(value));
    }
    if (have_length && length != remaining_) return fail("conflicting Content-Length headers");
    have_length = true;
    remaining_ = length;
  }
  if (!have_length) {
    state_ = State::kBodyUntilClose;
    return {};
  }
  if (remaining_ > limits_.max_body_bytes) {
    return fail("body of " + std::to_string(remaining_) + " bytes exceeds " +
                std::to_string(limits_.max_body_bytes));
  }
  state_ = remaining_ == 0 ? State::kDone : State::kBodyLength;
  return {};
}

bool ResponseParser::streaming() const {
  return body_sink_ && response_.status >= 200 && response_.status < 300;
}

Status ResponseParser::appendBody(std::string_view bytes) {
  if (streaming()) {
    if (auto status = body_sink_(bytes); !status) {
      state_ = State::kFailed;
      return status;
    }
    return {};
  }
  if (bytes.size() > limits_.max_body_bytes - response_.body.size()) {
    return fail("body exceeds " + std::to_string(limits_.max_body_bytes) + " bytes");
  }
  response_.body.append(bytes);
  return {};
}

}  // namespace relay::http
