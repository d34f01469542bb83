#include "console/console_guard.h"

#include <nlohmann/json.hpp>

#include "console/console_config.h"

namespace relay::console {
namespace {

using http::HttpReply;
using http::HttpRequest;

constexpr const char* kCookie = "relay_console";

// Constant time in the length of `secret`: no early exit on the first differing byte.
bool equalSecret(const std::string& candidate, const std::string& secret) {
  unsigned char difference = candidate.size() == secret.size() ? 0 : 1;
  for (std::size_t i = 0; i < secret.size(); ++i) {
    const char c = i < candidate.size() ? candidate[i] : '\0';
    difference |= static_cast<unsigned char>(c ^ secret[i]);
  }
  return difference == 0;
}

// The value of cookie `name` in a Cookie header, or empty.
std::string cookieValue(const std::string& header, std::string_view name) {
  std::size_t at = 0;
  while (at < header.size()) {
    const std::size_t end = std::min(header.find(';', at), header.size());
    std::string_view pair = std::string_view(header).substr(at, end - at);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.substr(0, name.size()) == name && pair.size() > name.size() &&
        pair[name.size()] == '=') {
      return std::string(pair.substr(name.size() + 1));
    }
    at = end + 1;
  }
  return {};
}

// The host part of a Host header (`127.0.0.1:9465`, `[::1]:9465`, `localhost`).
std::string hostOf(const std::string& host_header) {
  if (!host_header.empty() && host_header.front() == '[') {
    const std::size_t close = host_header.find(']');
    return close == std::string::npos ? host_header : host_header.substr(1, close - 1);
  }
  return host_header.substr(0, host_header.find(':'));
}

}  // namespace

HttpReply jsonError(int status, const std::string& message) {
  nlohmann::json body = {{"error", message}};
  return {status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
          "application/json"};
}

ConsoleGuard::ConsoleGuard(std::string token, std::string csrf, bool loopback, Clock& clock,
                           Random& random, GuardSettings settings)
    : token_(std::move(token)),
      csrf_(std::move(csrf)),
      loopback_(loopback),
      clock_(clock),
      random_(random),
      settings_(settings) {}

bool ConsoleGuard::tokenMatches(const std::string& candidate) const {
  return !token_.empty() && equalSecret(candidate, token_);
}

bool ConsoleGuard::authenticated(const HttpRequest& request) const {
  if (token_.empty()) return true;
  if (const std::string* authorization = request.header("authorization")) {
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization->rfind(kBearer, 0) == 0 &&
        tokenMatches(authorization->substr(kBearer.size()))) {
      return true;
    }
  }
  const std::string* cookie = request.header("cookie");
  return cookie != nullptr && sessionValid(cookieValue(*cookie, kCookie));
}

bool ConsoleGuard::sessionValid(const std::string& id) const {
  if (id.empty()) return false;
  const std::lock_guard lock(mutex_);
  const auto found = sessions_.find(id);
  if (found == sessions_.end()) return false;
  if (clock_.monotonicNow() < found->second) return true;
  sessions_.erase(found);
  return false;
}

bool ConsoleGuard::limited(const std::string& peer, MonoTime now) {
  while (!failures_.empty() && now - failures_.front().first >= settings_.failure_window) {
    failures_.pop_front();
  }
  if (failures_.size() >= settings_.failures_in_all) return true;
  std::size_t from_peer = 0;
  for (const auto& [when, who] : failures_) from_peer += who == peer;
  return from_peer >= settings_.failures_per_peer;
}

std::variant<std::string, HttpReply> ConsoleGuard::login(const HttpRequest& request,
                                                         const std::string& candidate) {
  const MonoTime now = clock_.monotonicNow();
  const std::lock_guard lock(mutex_);
  // Checked before the token: once limited, a right guess learns nothing either.
  if (limited(request.peer, now)) {
    const auto wait = std::chrono::duration_cast<std::chrono::seconds>(
        failures_.front().first + settings_.failure_window - now);
    HttpReply refused =
        jsonError(429, "too many failed logins: try again in " +
                           std::to_string(std::max<long long>(wait.count(), 1)) + " s");
    refused.headers.emplace_back("Retry-After",
                                 std::to_string(std::max<long long>(wait.count(), 1)));
    return refused;
  }
  if (!tokenMatches(candidate)) {
    failures_.emplace_back(now, request.peer);
    return jsonError(401, "wrong token");
  }
  if (sessions_.size() >= settings_.max_sessions) {
    // The session expiring first is the oldest: every session lives as long.
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second < oldest->second) oldest = it;
    }
    sessions_.erase(oldest);
  }
  const std::string id = random_.token() + random_.token();
  sessions_[id] = now + settings_.session_lifetime;
  // Secure when the page came over https (a TLS-terminating proxy): the browser then never
  // sends the cookie in clear. The Origin was checked to be this console (checkLogin).
  const std::string* origin = request.header("origin");
  const std::string* forwarded = request.header("x-forwarded-proto");
  const bool secure = (origin != nullptr && origin->rfind("https://", 0) == 0) ||
                      (forwarded != nullptr && *forwarded == "https");
  return std::string(kCookie) + "=" + id + "; Path=/; HttpOnly; SameSite=Strict" +
         (secure ? "; Secure" : "");
}

std::string ConsoleGuard::logout(const HttpRequest& request) {
  if (const std::string* cookie = request.header("cookie")) {
    const std::lock_guard lock(mutex_);
    sessions_.erase(cookieValue(*cookie, kCookie));
  }
  return std::string(kCookie) + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0";
}

bool ConsoleGuard::hostAllowed(const HttpRequest& request) const {
  if (!loopback_) return true;
  const std::string* host = request.header("host");
  // HTTP/1.0 clients may omit Host; a browser never does.
  return host == nullptr || isLoopbackHost(hostOf(*host));
}

std::optional<HttpReply> ConsoleGuard::checkHost(const HttpRequest& request) const {
  if (hostAllowed(request)) return std::nullopt;
  return jsonError(400, "the console answers only to a loopback Host on a loopback address");
}

std::optional<HttpReply> ConsoleGuard::checkRead(const HttpRequest& request) const {
  if (auto refused = checkHost(request)) return refused;
  if (!authenticated(request)) return jsonError(401, "log in with the console token first");
  return std::nullopt;
}

std::optional<HttpReply> ConsoleGuard::checkMutation(const HttpRequest& request) const {
  if (auto refused = checkRead(request)) return refused;
  if (auto refused = checkSameOrigin(request)) return refused;
  const std::string* csrf = request.header("x-relay-csrf");
  if (csrf == nullptr || !equalSecret(*csrf, csrf_)) {
    return jsonError(403, "missing or wrong X-Relay-CSRF token: reload the console");
  }
  return std::nullopt;
}

std::optional<HttpReply> ConsoleGuard::checkLogin(const HttpRequest& request) const {
  if (auto refused = checkHost(request)) return refused;
  return checkSameOrigin(request);
}

std::optional<HttpReply> ConsoleGuard::checkSameOrigin(const HttpRequest& request) const {
  if (const std::string* site = request.header("sec-fetch-site")) {
    if (*site != "same-origin")
      return jsonError(403, "cross-site requests may not change anything");
  }
  if (const std::string* origin = request.header("origin")) {
    const std::string* host = request.header("host");
    if (host == nullptr || (*origin != "http://" + *host && *origin != "https://" + *host)) {
      return jsonError(403, "the request's Origin is not this console");
    }
  }
  // A form cannot send this type cross-site without a CORS preflight, which is never granted.
  const std::string* type = request.header("content-type");
  if (type == nullptr || type->rfind("application/json", 0) != 0) {
    return jsonError(415, "send the body as application/json");
  }
  return std::nullopt;
}

HttpReply ConsoleGuard::secure(HttpReply reply) const {
  reply.headers.emplace_back("Content-Security-Policy",
                             "default-src 'self'; script-src 'self'; style-src 'self'; "
                             "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
                             "base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
  reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
  reply.headers.emplace_back("X-Frame-Options", "DENY");
  reply.headers.emplace_back("Referrer-Policy", "no-referrer");
  reply.headers.emplace_back("Cross-Origin-Resource-Policy", "same-origin");
  return reply;
}

}  // namespace relay::console
