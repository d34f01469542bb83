#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "common/clock.h"
#include "common/random.h"
#include "http/server.h"

namespace relay::console {

/// Fixed internals of the console's sessions and of its login limit; tests shorten them.
struct GuardSettings {
  std::chrono::milliseconds session_lifetime{12 * 60 * 60 * 1000};
  std::size_t max_sessions = 256;  // past them the oldest session ends
  /// Failed logins allowed within `failure_window`: from one peer address, and from all.
  std::size_t failures_per_peer = 5;
  std::size_t failures_in_all = 30;
  std::chrono::milliseconds failure_window{60'000};
};

/// The console's access rules (docs/console.md "Security"), one place for every route:
///  - reads need a session when a token is configured: the `relay_console` cookie that POST
///    /api/login sets (a random session id, never the token; HttpOnly, SameSite=Strict, Secure
///    when the page was loaded over https) or `Authorization: Bearer <token>`;
///  - failed logins are limited per peer address and in all; past the limit every login is
///    refused (429) until the window has passed;
///  - a mutation (POST) also needs the per-process CSRF token in `X-Relay-CSRF` (same-origin
///    script reads it from GET /api/session; another site cannot), a JSON body, and no
///    cross-site `Origin`/`Sec-Fetch-Site`;
///  - on a loopback address the `Host` must name a loopback host (no DNS rebinding);
///  - every reply carries a Content-Security-Policy without inline scripts, nosniff and
///    frame-ancestors 'none'.
/// The token is compared in constant time and never logged or echoed. Thread-safe.
class ConsoleGuard {
 public:
  /// `token`: empty when none is configured (loopback only). `csrf`: a fresh random secret.
  /// `random` makes session ids (SecureRandom in the console); `clock` times sessions and
  /// failed logins.
  ConsoleGuard(std::string token, std::string csrf, bool loopback, Clock& clock, Random& random,
               GuardSettings settings = {});

  /// nullopt when the Host is acceptable (any on a non-loopback address); else a 400 reply.
  /// Static files and GET /api/session need only this.
  std::optional<http::HttpReply> checkHost(const http::HttpRequest& request) const;
  /// Whether the request carries the session (always true without a token).
  bool authenticated(const http::HttpRequest& request) const;
  /// nullopt when a read may proceed; otherwise the reply refusing it (400, 401).
  std::optional<http::HttpReply> checkRead(const http::HttpRequest& request) const;
  /// nullopt when a mutation may proceed; otherwise the reply refusing it (401, 403, 415).
  std::optional<http::HttpReply> checkMutation(const http::HttpRequest& request) const;
  /// nullopt when a login may proceed: a mutation's checks but the session and CSRF token.
  std::optional<http::HttpReply> checkLogin(const http::HttpRequest& request) const;
  /// The login check: whether `candidate` is the token.
  bool tokenMatches(const std::string& candidate) const;
  /// Logs in with `candidate`: the Set-Cookie value of a new session, or the reply refusing
  /// it (401 for a wrong token, 429 once too many logins failed, with Retry-After).
  std::variant<std::string, http::HttpReply> login(const http::HttpRequest& request,
                                                   const std::string& candidate);
  /// Ends the request's session, if it has one; the Set-Cookie value that clears the cookie.
  std::string logout(const http::HttpRequest& request);
  /// Adds the security headers every reply carries.
  http::HttpReply secure(http::HttpReply reply) const;

  bool tokenRequired() const { return !token_.empty(); }
  const std::string& csrf() const { return csrf_; }

 private:
  bool hostAllowed(const http::HttpRequest& request) const;
  std::optional<http::HttpReply> checkSameOrigin(const http::HttpRequest& request) const;

  // Whether the cookie names a live session (ending it when it expired).
  bool sessionValid(const std::string& id) const;
  // Drops failures older than the window; true while logins are refused for `peer`.
  bool limited(const std::string& peer, MonoTime now);

  std::string token_;
  std::string csrf_;
  bool loopback_;
  Clock& clock_;
  Random& random_;
  const GuardSettings settings_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, MonoTime> sessions_;       // id -> expiry
  std::deque<std::pair<MonoTime, std::string>> failures_;  // when, from which peer
};

/// A JSON error reply `{"error": message}` with `status`.
http::HttpReply jsonError(int status, const std::string& message);

}  // namespace relay::console
