// Who may read and who may change what through the console: the session token (cookie or
// bearer), the CSRF token, same-origin checks, the Host check on loopback, the security headers.
#include "console/console_guard.h"

#include <gtest/gtest.h>

#include "common/random.h"
#include "fakes/fake_clock.h"

namespace relay::console {
namespace {

using http::HttpRequest;

constexpr const char* kToken = "0123456789abcdef-token";
constexpr const char* kCsrf = "csrf-secret";

HttpRequest request(std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest r;
  r.method = "POST";
  r.path = "/api/dlq/delete";
  r.headers = std::move(headers);
  return r;
}

std::vector<std::pair<std::string, std::string>> sameOriginPost(const std::string& cookie = "") {
  std::vector<std::pair<std::string, std::string>> headers = {{"host", "127.0.0.1:9465"},
                                                              {"origin", "http://127.0.0.1:9465"},
                                                              {"sec-fetch-site", "same-origin"},
                                                              {"content-type", "application/json"},
                                                              {"x-relay-csrf", kCsrf}};
  if (!cookie.empty()) headers.emplace_back("cookie", "a=b; " + cookie);
  return headers;
}

int status(const std::optional<http::HttpReply>& reply) { return reply ? reply->status : 0; }

relay::testing::FakeClock test_clock;
SystemRandom test_random;

ConsoleGuard makeGuard(std::string token, bool loopback = true, GuardSettings settings = {}) {
  return ConsoleGuard(std::move(token), kCsrf, loopback, test_clock, test_random, settings);
}

// A login from `peer` with `candidate`: the session's cookie value (`relay_console=<id>`), or
// the refusal's status.
std::variant<std::string, int> logIn(ConsoleGuard& guard, const std::string& candidate,
                                     const std::string& peer = "192.0.2.10",
                                     const std::string& origin = "http://127.0.0.1:9465") {
  HttpRequest r = request({{"host", "127.0.0.1:9465"}, {"origin", origin}});
  r.peer = peer;
  auto result = guard.login(r, candidate);
  if (auto* refused = std::get_if<http::HttpReply>(&result)) return refused->status;
  const std::string& cookie = std::get<std::string>(result);
  return cookie.substr(0, cookie.find(';'));
}

TEST(ConsoleGuard, WithoutATokenReadsAreOpenButMutationsStillNeedTheCsrfToken) {
  const ConsoleGuard guard = makeGuard("");
  EXPECT_EQ(status(guard.checkRead(request({{"host", "localhost:9465"}}))), 0);
  EXPECT_EQ(status(guard.checkMutation(request(sameOriginPost()))), 0);
  auto headers = sameOriginPost();
  headers.pop_back();  // no X-Relay-CSRF
  EXPECT_EQ(status(guard.checkMutation(request(headers))), 403);
}

TEST(ConsoleGuard, WithATokenEveryReadNeedsTheSession) {
  ConsoleGuard guard = makeGuard(kToken);
  EXPECT_EQ(status(guard.checkRead(request({{"host", "127.0.0.1:9465"}}))), 401);
  const auto session = logIn(guard, kToken);
  ASSERT_TRUE(std::holds_alternative<std::string>(session));
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", std::get<std::string>(session)}}))), 0);
  // The cookie holds a session id, never the token: the token itself is no session.
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", std::string("relay_console=") + kToken}}))),
            401);
  EXPECT_EQ(status(guard.checkRead(request({{"authorization", std::string("Bearer ") + kToken}}))),
            0);
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", "relay_console=0123456789abcdef-tokex"}}))),
            401);
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", "relay_console=0123456789abcdef"}}))), 401);
  EXPECT_EQ(status(guard.checkRead(request({{"authorization", "Basic abc"}}))), 401);
}

TEST(ConsoleGuard, AMutationNeedsTheSessionTheCsrfTokenJsonAndTheSameOrigin) {
  ConsoleGuard guard = makeGuard(kToken);
  const std::string cookie = std::get<std::string>(logIn(guard, kToken));
  EXPECT_EQ(status(guard.checkMutation(request(sameOriginPost(cookie)))), 0);
  EXPECT_EQ(status(guard.checkMutation(request(sameOriginPost()))), 401);
  const auto without = [&cookie](std::string_view name) {
    auto headers = sameOriginPost(cookie);
    std::erase_if(headers, [name](const auto& header) { return header.first == name; });
    return headers;
  };
  EXPECT_EQ(status(guard.checkMutation(request(without("x-relay-csrf")))), 403);
  EXPECT_EQ(status(guard.checkMutation(request(without("content-type")))), 415);
  // Non-browser clients send neither Origin nor Sec-Fetch-Site: the tokens decide.
  auto plain = without("origin");
  std::erase_if(plain, [](const auto& header) { return header.first == "sec-fetch-site"; });
  EXPECT_EQ(status(guard.checkMutation(request(plain))), 0);
  auto wrong_csrf = without("x-relay-csrf");
  wrong_csrf.emplace_back("x-relay-csrf", "csrf-secreT");
  EXPECT_EQ(status(guard.checkMutation(request(wrong_csrf))), 403);
}

TEST(ConsoleGuard, CrossSiteMutationsAreRefusedEvenWithTheCookie) {
  ConsoleGuard guard = makeGuard(kToken);
  const std::string cookie = std::get<std::string>(logIn(guard, kToken));
  auto cross_site = sameOriginPost(cookie);
  for (auto& [name, value] : cross_site) {
    if (name == "sec-fetch-site") value = "cross-site";
  }
  EXPECT_EQ(status(guard.checkMutation(request(cross_site))), 403);
  auto other_origin = sameOriginPost(cookie);
  for (auto& [name, value] : other_origin) {
    if (name == "origin") value = "http://evil.example";
    if (name == "sec-fetch-site") value = "same-origin";
  }
  EXPECT_EQ(status(guard.checkMutation(request(other_origin))), 403);
}

TEST(ConsoleGuard, OnLoopbackAForeignHostIsRefused) {
  const ConsoleGuard guard = makeGuard("");
  // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host.
  EXPECT_EQ(status(guard.checkRead(request({{"host", "evil.example:9465"}}))), 400);
  EXPECT_EQ(status(guard.checkHost(request({{"host", "[::1]:9465"}}))), 0);
  const ConsoleGuard exposed = makeGuard(kToken, /*loopback=*/false);
  EXPECT_EQ(status(exposed.checkHost(request({{"host", "relay.internal:9465"}}))), 0);
}

TEST(ConsoleGuard, LoginNeedsNeitherSessionNorCsrfButTheSameOrigin) {
  const ConsoleGuard guard = makeGuard(kToken);
  EXPECT_EQ(status(guard.checkLogin(request(sameOriginPost()))), 0);
  EXPECT_TRUE(guard.tokenMatches(kToken));
  EXPECT_FALSE(guard.tokenMatches(""));
  EXPECT_FALSE(makeGuard("").tokenMatches(""));
}

TEST(ConsoleGuard, ALoginStartsARandomSessionInAnHttpOnlySameSiteStrictCookie) {
  ConsoleGuard guard = makeGuard(kToken);
  HttpRequest login = request({{"host", "127.0.0.1:9465"}, {"origin", "http://127.0.0.1:9465"}});
  const auto first = guard.login(login, kToken);
  const auto second = guard.login(login, kToken);
  ASSERT_TRUE(std::holds_alternative<std::string>(first));
  const std::string& cookie = std::get<std::string>(first);
  EXPECT_EQ(cookie.find(kToken), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  EXPECT_EQ(cookie.find("Secure"), std::string::npos);  // served over plain http
  EXPECT_NE(cookie, std::get<std::string>(second));
  EXPECT_EQ(cookie.find(';') - std::string("relay_console=").size(), 64u);  // 256 bits of hex
  // Over https (a TLS-terminating proxy) the cookie never travels in clear.
  HttpRequest over_tls = request({{"host", "relay.example"}, {"origin", "https://relay.example"}});
  EXPECT_NE(std::get<std::string>(guard.login(over_tls, kToken)).find("; Secure"),
            std::string::npos);
}

TEST(ConsoleGuard, ASessionEndsAtLogoutAndAfterItsLifetime) {
  GuardSettings settings;
  settings.session_lifetime = std::chrono::hours(1);
  ConsoleGuard guard = makeGuard(kToken, true, settings);
  const std::string kept = std::get<std::string>(logIn(guard, kToken));
  const std::string ended = std::get<std::string>(logIn(guard, kToken));
  EXPECT_NE(guard.logout(request({{"cookie", ended}})).find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", ended}}))), 401);
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", kept}}))), 0);
  test_clock.advance(std::chrono::minutes(61));
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", kept}}))), 401);
}

TEST(ConsoleGuard, FailedLoginsAreLimitedPerPeerAndInAll) {
  GuardSettings settings;
  settings.failures_per_peer = 3;
  settings.failures_in_all = 5;
  settings.failure_window = std::chrono::minutes(1);
  ConsoleGuard guard = makeGuard(kToken, true, settings);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::get<int>(logIn(guard, "guess", "192.0.2.1")), 401);
  // The fourth try from that peer is refused before the token is even looked at.
  EXPECT_EQ(std::get<int>(logIn(guard, kToken, "192.0.2.1")), 429);
  // Another peer still logs in, until failures from everywhere reach the ceiling.
  EXPECT_TRUE(std::holds_alternative<std::string>(logIn(guard, kToken, "192.0.2.2")));
  EXPECT_EQ(std::get<int>(logIn(guard, "guess", "192.0.2.3")), 401);
  EXPECT_EQ(std::get<int>(logIn(guard, "guess", "192.0.2.4")), 401);
  EXPECT_EQ(std::get<int>(logIn(guard, kToken, "192.0.2.5")), 429);
  test_clock.advance(std::chrono::seconds(61));
  EXPECT_TRUE(std::holds_alternative<std::string>(logIn(guard, kToken, "192.0.2.1")));
}

TEST(ConsoleGuard, EveryReplyGetsAPolicyWithoutInlineScripts) {
  const auto reply = makeGuard("").secure({200, "x"});
  std::map<std::string, std::string> headers(reply.headers.begin(), reply.headers.end());
  EXPECT_NE(headers["Content-Security-Policy"].find("default-src 'self'"), std::string::npos);
  EXPECT_NE(headers["Content-Security-Policy"].find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(headers["Content-Security-Policy"].find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(headers["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(headers["X-Frame-Options"], "DENY");
}

}  // namespace
}  // namespace relay::console
