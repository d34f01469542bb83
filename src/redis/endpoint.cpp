#include "redis/endpoint.h"

#include <charconv>
#include <limits>
#include <string>

namespace relay::redis {
namespace {

constexpr std::string_view kExpected =
    "expected host:port, redis://[user[:password]@]host:port[/db] or unix:///path/to.sock";

relay::Error uriError(std::string_view what) {
  return relay::Error::invalid("invalid Redis URI: " + std::string(what) + " (" +
                               std::string(kExpected) + ")");
}

bool isDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Parses decimal digits into [min, max]; false on anything else (sign, space, overflow).
bool parseBounded(std::string_view text, int min, int max, int& out) {
  if (!isDigits(text)) return false;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  if (value < min || value > max) return false;
  out = value;
  return true;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX escapes. `what` names the part in the message; the text itself is not echoed
// because it may be a password.
relay::Result<std::string> percentDecode(std::string_view text, std::string_view what) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) {
      return uriError("incomplete %-escape in the " + std::string(what) +
                      " (expected % followed by two hex digits)");
    }
    const int high = hexValue(text[i + 1]);
    const int low = hexValue(text[i + 2]);
    if (high < 0 || low < 0) {
      return uriError("bad %-escape in the " + std::string(what) +
                      " (expected % followed by two hex digits)");
    }
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

// Parses "host:port" or "[v6]:port" into the endpoint.
relay::Status parseHostPort(std::string_view text, Endpoint& endpoint) {
  if (text.empty()) return uriError("missing host:port");
  std::string_view host;
  std::string_view port;
  if (text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return uriError("unterminated '[' in IPv6 address '" + std::string(text) + "'");
    }
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return uriError("missing port after '" + std::string(text.substr(0, close + 1)) +
                      "' (expected [addr]:port)");
    }
    port = rest.substr(1);
    if (host.empty()) return uriError("empty IPv6 address in '" + std::string(text) + "'");
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return uriError("missing port in '" + std::string(text) + "'");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return uriError("IPv6 address '" + std::string(host) + "' must be in brackets, as in [" +
                      std::string(host) + "]:" + std::string(port));
    }
    if (host.empty()) return uriError("missing host before ':" + std::string(port) + "'");
  }
  int port_number = 0;
  if (!parseBounded(port, 1, 65535, port_number)) {
    return uriError("port '" + std::string(port) + "' is not a number from 1 to 65535");
  }
  endpoint.transport = Endpoint::Transport::kTcp;
  endpoint.host = std::string(host);
  endpoint.port = port_number;
  return {};
}

relay::Result<Endpoint> parseRedisScheme(std::string_view rest) {
  Endpoint endpoint;
  // Userinfo ends at the last '@' (a database number never holds one), so a raw '@' or '/' in
  // a password still parses and is never echoed in a host or port message.
  std::string_view host_part = rest;
  const size_t at = rest.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    host_part = rest.substr(at + 1);
    const size_t colon = userinfo.find(':');
    auto user = percentDecode(userinfo.substr(0, colon), "user name");
    if (!user) return user.error();
    endpoint.username = std::move(*user);
    if (colon != std::string_view::npos) {
      auto password = percentDecode(userinfo.substr(colon + 1), "password");
      if (!password) return password.error();
      endpoint.password = std::move(*password);
    }
    if (endpoint.username.empty() && endpoint.password.empty()) {
      return uriError("empty user and password before '@' (drop the '@' or fill them in)");
    }
  }
  const size_t slash = host_part.find('/');
  const std::string_view authority = host_part.substr(0, slash);
  if (auto status = parseHostPort(authority, endpoint); !status) return status.error();
  if (slash != std::string_view::npos) {
    const std::string_view db = host_part.substr(slash + 1);
    if (!db.empty() && !parseBounded(db, 0, std::numeric_limits<int>::max(), endpoint.db)) {
      return uriError("database '" + std::string(db) + "' is not a non-negative number");
    }
  }
  return endpoint;
}

}  // namespace

std::string Endpoint::describe() const {
  if (transport == Transport::kUnix) {
    std::string out = "unix://" + unix_path;
    if (hasAuth()) out += " as " + (username.empty() ? std::string("default") : username);
    if (db != 0) out += " db " + std::to_string(db);
    return out;
  }
  const std::string host_port =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  if (!hasAuth() && db == 0) return host_port;
  std::string out = "redis://";
  if (hasAuth()) {
    out += username;
    if (!password.empty()) out += ":***";
    out += "@";
  }
  out += host_port;
  if (db != 0) out += "/" + std::to_string(db);
  return out;
}

relay::Result<Endpoint> parseRedisUri(std::string_view uri) {
  if (uri.empty()) return uriError("empty");
  const size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) {
    Endpoint endpoint;
    if (uri.find('@') != std::string_view::npos || uri.find('/') != std::string_view::npos) {
      return uriError("a user, password or database needs the redis:// form");
    }
    if (auto status = parseHostPort(uri, endpoint); !status) return status.error();
    return endpoint;
  }
  const std::string_view scheme = uri.substr(0, scheme_end);
  const std::string_view rest = uri.substr(scheme_end + 3);
  if (scheme == "redis") return parseRedisScheme(rest);
  if (scheme == "unix") {
    if (rest.empty() || rest.front() != '/') {
      return uriError("unix:// must be followed by an absolute socket path");
    }
    if (rest.size() == 1) return uriError("unix:// socket path is just '/'");
    Endpoint endpoint;
    endpoint.transport = Endpoint::Transport::kUnix;
    endpoint.host.clear();
    endpoint.port = 0;
    endpoint.unix_path = std::string(rest);
    return endpoint;
  }
  if (scheme == "rediss") return uriError("TLS (rediss://) is not supported");
  return uriError("unsupported scheme '" + std::string(scheme) + "://'");
}

}  // namespace relay::redis
