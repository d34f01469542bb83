#include <limits>
#include <string>

#include "common/hex.h"
#include "common/whole_number.h"
#include "redis/endpoint.h"
#include "redis/topology.h"

namespace relay::redis {
namespace {

constexpr int kRedisPort = 6379;
constexpr int kSentinelPort = 26379;

constexpr std::string_view kExpected =
    "expected host:port, redis://[user[:password]@]host[:port][/db], rediss://... (TLS), "
    "unix:///path/to.sock[?user=U&password=P&db=N] or "
    "redis+sentinel://[user[:password]@]host1[:port],host2[:port]/MASTER_NAME[/db]";

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
  if (!parseWholeNumber(text, value) || value < min || value > max) return false;
  out = value;
  return true;
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
    const int high = hexDigitValue(text[i + 1]);
    const int low = hexDigitValue(text[i + 2]);
    if (high < 0 || low < 0) {
      return uriError("bad %-escape in the " + std::string(what) +
                      " (expected % followed by two hex digits)");
    }
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

relay::Status parseDb(std::string_view text, Endpoint& endpoint) {
  if (!text.empty() && !parseBounded(text, 0, std::numeric_limits<int>::max(), endpoint.db)) {
    return uriError("database '" + std::string(text) + "' is not a non-negative number");
  }
  return {};
}

// Parses "host:port", "[v6]:port" (or, when `default_port` is not 0, "host" and "[v6]").
relay::Result<Address> parseHostPort(std::string_view text, int default_port) {
  if (text.empty()) return uriError(default_port ? "missing host" : "missing host:port");
  std::string_view host;
  std::string_view port;
  bool has_port = true;
  if (text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return uriError("unterminated '[' in IPv6 address '" + std::string(text) + "'");
    }
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty() && default_port != 0) {
      has_port = false;
    } else if (rest.empty() || rest.front() != ':') {
      return uriError("missing port after '" + std::string(text.substr(0, close + 1)) +
                      "' (expected [addr]:port)");
    } else {
      port = rest.substr(1);
    }
    if (host.empty()) return uriError("empty IPv6 address in '" + std::string(text) + "'");
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      if (default_port == 0) return uriError("missing port in '" + std::string(text) + "'");
      host = text;
      has_port = false;
    } else {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
    }
    if (host.find(':') != std::string_view::npos) {
      return uriError("IPv6 address '" + std::string(host) + "' must be in brackets, as in [" +
                      std::string(host) + "]:" + std::string(port));
    }
    if (host.empty()) return uriError("missing host before ':" + std::string(port) + "'");
  }
  Address address;
  address.host = std::string(host);
  address.port = default_port;
  if (has_port && !parseBounded(port, 1, 65535, address.port)) {
    return uriError("port '" + std::string(port) + "' is not a number from 1 to 65535");
  }
  return address;
}

// Splits "userinfo@rest" at the last '@' (a host, a master name or a database never holds one),
// so a raw '@' or '/' in a password still parses and is never echoed in a host or port message.
relay::Result<std::string_view> takeUserinfo(std::string_view rest, Endpoint& endpoint) {
  const size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return rest;
  const std::string_view userinfo = rest.substr(0, at);
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
  return rest.substr(at + 1);
}

relay::Status parseServer(std::string_view rest, Endpoint& endpoint) {
  auto host_part = takeUserinfo(rest, endpoint);
  if (!host_part) return host_part.error();
  const size_t slash = host_part->find('/');
  auto address = parseHostPort(host_part->substr(0, slash), kRedisPort);
  if (!address) return address.error();
  endpoint.host = address->host;
  endpoint.port = address->port;
  if (slash != std::string_view::npos) return parseDb(host_part->substr(slash + 1), endpoint);
  return {};
}

relay::Status parseSentinel(std::string_view rest, Endpoint& endpoint) {
  auto host_part = takeUserinfo(rest, endpoint);
  if (!host_part) return host_part.error();
  const size_t slash = host_part->find('/');
  if (slash == std::string_view::npos || slash + 1 == host_part->size()) {
    return uriError("missing /MASTER_NAME after the sentinels");
  }
  std::string_view hosts = host_part->substr(0, slash);
  while (true) {
    const size_t comma = hosts.find(',');
    auto address = parseHostPort(hosts.substr(0, comma), kSentinelPort);
    if (!address) return address.error();
    endpoint.sentinels.push_back(std::move(*address));
    if (comma == std::string_view::npos) break;
    hosts = hosts.substr(comma + 1);
  }
  const std::string_view path = host_part->substr(slash + 1);
  const size_t db_slash = path.find('/');
  endpoint.master_name = std::string(path.substr(0, db_slash));
  if (endpoint.master_name.empty()) return uriError("empty MASTER_NAME");
  // The first sentinel stands in as the direct address until the master is found.
  endpoint.host = endpoint.sentinels.front().host;
  endpoint.port = endpoint.sentinels.front().port;
  if (db_slash != std::string_view::npos) return parseDb(path.substr(db_slash + 1), endpoint);
  return {};
}

relay::Status parseUnix(std::string_view rest, Endpoint& endpoint) {
  const size_t question = rest.find('?');
  const std::string_view path = rest.substr(0, question);
  if (path.empty() || path.front() != '/') {
    return uriError("unix:// must be followed by an absolute socket path");
  }
  if (path.size() == 1) return uriError("unix:// socket path is just '/'");
  endpoint.transport = Endpoint::Transport::kUnix;
  endpoint.host.clear();
  endpoint.port = 0;
  endpoint.unix_path = std::string(path);
  if (question == std::string_view::npos) return {};
  std::string_view query = rest.substr(question + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t equals = pair.find('=');
    const std::string_view name = pair.substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    if (name == "db") {
      if (auto status = parseDb(value, endpoint); !status) return status.error();
    } else if (name == "user" || name == "password") {
      auto decoded = percentDecode(value, name == "user" ? "user name" : "password");
      if (!decoded) return decoded.error();
      (name == "user" ? endpoint.username : endpoint.password) = std::move(*decoded);
    } else if (!pair.empty()) {
      return uriError("unknown unix:// parameter '" + std::string(name) +
                      "' (expected user, password or db)");
    }
  }
  return {};
}

}  // namespace

relay::Result<Endpoint> parseRedisUri(std::string_view uri) {
  if (uri.empty()) return uriError("empty");
  Endpoint endpoint;
  const size_t scheme_end = uri.find("://");
  relay::Status parsed;
  if (scheme_end == std::string_view::npos) {
    if (uri.find('@') != std::string_view::npos || uri.find('/') != std::string_view::npos) {
      return uriError("a user, password or database needs the redis:// form");
    }
    auto address = parseHostPort(uri, 0);
    if (!address) return address.error();
    endpoint.host = address->host;
    endpoint.port = address->port;
  } else {
    const std::string_view scheme = uri.substr(0, scheme_end);
    const std::string_view rest = uri.substr(scheme_end + 3);
    endpoint.tls = scheme == "rediss" || scheme == "rediss+sentinel";
    if (scheme == "redis" || scheme == "rediss") {
      parsed = parseServer(rest, endpoint);
    } else if (scheme == "redis+sentinel" || scheme == "rediss+sentinel") {
      parsed = parseSentinel(rest, endpoint);
    } else if (scheme == "unix") {
      parsed = parseUnix(rest, endpoint);
    } else {
      return uriError("unsupported scheme '" + std::string(scheme) + "://'");
    }
  }
  if (!parsed) return parsed.error();
  endpoint.topology = std::make_shared<Topology>();
  return endpoint;
}

}  // namespace relay::redis
