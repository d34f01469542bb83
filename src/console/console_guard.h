#pragma once

#include <optional>
#include <string>

#include "http/server.h"

namespace relay::console {

/// The console's access rules (docs/console.md "Security"), one place for every route:
///  - reads need the session when a token is configured: the `relay_console` cookie set by
///    POST /api/login (HttpOnly, SameSite=Strict) or `Authorization: Bearer <token>`;
///  - a mutation (POST) also needs the per-process CSRF token in `X-Relay-CSRF` (same-origin
///    script reads it from GET /api/session; another site cannot), a JSON body, and no
///    cross-site `Origin`/`Sec-Fetch-Site`;
///  - on a loopback address the `Host` must name a loopback host (no DNS rebinding);
///  - every reply carries a Content-Security-Policy without inline scripts, nosniff and
///    frame-ancestors 'none'.
/// The token is compared in constant time and never logged or echoed. Thread-safe (immutable).
class ConsoleGuard {
 public:
  /// `token`: empty when none is configured (loopback only). `csrf`: a fresh random secret.
  ConsoleGuard(std::string token, std::string csrf, bool loopback);

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
  /// The Set-Cookie value of a session.
  std::string sessionCookie() const;
  /// Adds the security headers every reply carries.
  http::HttpReply secure(http::HttpReply reply) const;

  bool tokenRequired() const { return !token_.empty(); }
  const std::string& csrf() const { return csrf_; }

 private:
  bool hostAllowed(const http::HttpRequest& request) const;
  std::optional<http::HttpReply> checkSameOrigin(const http::HttpRequest& request) const;

  std::string token_;
  std::string csrf_;
  bool loopback_;
};

/// A JSON error reply `{"error": message}` with `status`.
http::HttpReply jsonError(int status, const std::string& message);

}  // namespace relay::console
