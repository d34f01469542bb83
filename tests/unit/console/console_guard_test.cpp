// Who may read and who may change what through the console: the session token (cookie or
// bearer), the CSRF token, same-origin checks, the Host check on loopback, the security headers.
#include "console/console_guard.h"

#include <gtest/gtest.h>

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

std::vector<std::pair<std::string, std::string>> sameOriginPost(bool with_token = true) {
  std::vector<std::pair<std::string, std::string>> headers = {{"host", "127.0.0.1:9465"},
                                                              {"origin", "http://127.0.0.1:9465"},
                                                              {"sec-fetch-site", "same-origin"},
                                                              {"content-type", "application/json"},
                                                              {"x-relay-csrf", kCsrf}};
  if (with_token) headers.emplace_back("cookie", std::string("a=b; relay_console=") + kToken);
  return headers;
}

int status(const std::optional<http::HttpReply>& reply) { return reply ? reply->status : 0; }

TEST(ConsoleGuard, WithoutATokenReadsAreOpenButMutationsStillNeedTheCsrfToken) {
  const ConsoleGuard guard("", kCsrf, /*loopback=*/true);
  EXPECT_EQ(status(guard.checkRead(request({{"host", "localhost:9465"}}))), 0);
  EXPECT_EQ(status(guard.checkMutation(request(sameOriginPost(false)))), 0);
  auto headers = sameOriginPost(false);
  headers.pop_back();  // no X-Relay-CSRF
  EXPECT_EQ(status(guard.checkMutation(request(headers))), 403);
}

TEST(ConsoleGuard, WithATokenEveryReadNeedsTheSession) {
  const ConsoleGuard guard(kToken, kCsrf, true);
  EXPECT_EQ(status(guard.checkRead(request({{"host", "127.0.0.1:9465"}}))), 401);
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", std::string("relay_console=") + kToken}}))),
            0);
  EXPECT_EQ(status(guard.checkRead(request({{"authorization", std::string("Bearer ") + kToken}}))),
            0);
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", "relay_console=0123456789abcdef-tokex"}}))),
            401);
  EXPECT_EQ(status(guard.checkRead(request({{"cookie", "relay_console=0123456789abcdef"}}))), 401);
  EXPECT_EQ(status(guard.checkRead(request({{"authorization", "Basic abc"}}))), 401);
}

TEST(ConsoleGuard, AMutationNeedsTheSessionTheCsrfTokenJsonAndTheSameOrigin) {
  const ConsoleGuard guard(kToken, kCsrf, true);
  EXPECT_EQ(status(guard.checkMutation(request(sameOriginPost()))), 0);
  EXPECT_EQ(status(guard.checkMutation(request(sameOriginPost(false)))), 401);
  const auto without = [](std::string_view name) {
    auto headers = sameOriginPost();
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
  const ConsoleGuard guard(kToken, kCsrf, true);
  auto cross_site = sameOriginPost();
  for (auto& [name, value] : cross_site) {
    if (name == "sec-fetch-site") value = "cross-site";
  }
  EXPECT_EQ(status(guard.checkMutation(request(cross_site))), 403);
  auto other_origin = sameOriginPost();
  for (auto& [name, value] : other_origin) {
    if (name == "origin") value = "http://evil.example";
    if (name == "sec-fetch-site") value = "same-origin";
  }
  EXPECT_EQ(status(guard.checkMutation(request(other_origin))), 403);
}

TEST(ConsoleGuard, OnLoopbackAForeignHostIsRefused) {
  const ConsoleGuard guard("", kCsrf, true);
  // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host.
  EXPECT_EQ(status(guard.checkRead(request({{"host", "evil.example:9465"}}))), 400);
  EXPECT_EQ(status(guard.checkHost(request({{"host", "[::1]:9465"}}))), 0);
  const ConsoleGuard exposed(kToken, kCsrf, /*loopback=*/false);
  EXPECT_EQ(status(exposed.checkHost(request({{"host", "relay.internal:9465"}}))), 0);
}

TEST(ConsoleGuard, LoginNeedsNeitherSessionNorCsrfButTheSameOrigin) {
  const ConsoleGuard guard(kToken, kCsrf, true);
  EXPECT_EQ(status(guard.checkLogin(request(sameOriginPost(false)))), 0);
  EXPECT_TRUE(guard.tokenMatches(kToken));
  EXPECT_FALSE(guard.tokenMatches(""));
  EXPECT_FALSE(ConsoleGuard("", kCsrf, true).tokenMatches(""));
}

TEST(ConsoleGuard, TheCookieIsHttpOnlyAndSameSiteStrict) {
  const std::string cookie = ConsoleGuard(kToken, kCsrf, true).sessionCookie();
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
}

TEST(ConsoleGuard, EveryReplyGetsAPolicyWithoutInlineScripts) {
  const auto reply = ConsoleGuard("", kCsrf, true).secure({200, "x"});
  std::map<std::string, std::string> headers(reply.headers.begin(), reply.headers.end());
  EXPECT_NE(headers["Content-Security-Policy"].find("default-src 'self'"), std::string::npos);
  EXPECT_NE(headers["Content-Security-Policy"].find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(headers["Content-Security-Policy"].find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(headers["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(headers["X-Frame-Options"], "DENY");
}

}  // namespace
}  // namespace relay::console
