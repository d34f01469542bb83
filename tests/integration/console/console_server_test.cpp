// `relay console` over HTTP against a real redis-server: the guard on every route (HTTP-level:
// no mutation without the tokens, nothing changed), read-only mode, the Dead letters API
// (filters, totals, pages, bulk actions on exactly the confirmed selection, replay refusals),
// the Overview and Pending reads; and the binary's refusal to serve off loopback without a token.
#include "console/console.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/system_clock.h"
#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_server.h"

namespace relay::console {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr const char* kToken = "integration-token-0123456789";

struct Response {
  int status = 0;
  std::string head;
  json body;
};

class ConsoleServerTest : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    apps_.write("shop/template.yaml",
                "runtime: exec\nevents:\n  - handler: bin/pay.sh\n"
                "    pattern: {kind: [order]}\n");
    apps_.write("shop/bin/pay.sh", "#!/bin/sh\ncat > /dev/null\necho paid\n", 0755);
  }
  void TearDown() override {
    if (console_) console_->stop();
  }
  void start(bool read_only = false, std::string token = kToken) {
    config_.worker.redis = server().endpoint();
    config_.worker.apps = apps_.path();
    config_.worker.runtime.backend = config::Backend::kProcess;
    config_.address = {"127.0.0.1", 0};
    config_.token = std::move(token);
    config_.read_only = read_only;
    ConsoleInternals internals;
    internals.apps_max_age = milliseconds(0);
    auto created = Console::create(config_, log_, clock_, random_, internals);
    ASSERT_TRUE(created.ok()) << created.error().message;
    console_ = std::move(created).value();
    ASSERT_TRUE(console_->start().ok());
  }
  // One request on a fresh connection; `headers` are sent as given (plus Host).
  Response send(const std::string& method, const std::string& target,
                std::vector<std::string> headers = {}, const std::string& body = "") {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(console_->address().port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{20, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    std::string request = method + " " + target + " HTTP/1.1\r\n";
    if (std::none_of(headers.begin(), headers.end(),
                     [](const std::string& header) { return header.rfind("Host:", 0) == 0; })) {
      request += "Host: 127.0.0.1:" + std::to_string(console_->address().port) + "\r\n";
    }
    for (const std::string& header : headers) request += header + "\r\n";
    if (!body.empty() || method == "POST") {
      request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    request += "\r\n" + body;
    EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string raw;
    char buffer[8192];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, n);
    ::close(fd);
    Response response;
    const std::size_t split = raw.find("\r\n\r\n");
    response.head = raw.substr(0, split);
    if (raw.size() > 9) response.status = std::stoi(raw.substr(9, 3));
    if (split != std::string::npos) {
      response.body = json::parse(raw.substr(split + 4), nullptr, false);
    }
    return response;
  }
  std::string auth() const { return std::string("Authorization: Bearer ") + kToken; }
  std::string csrf() {
    const Response session = send("GET", "/api/session", {auth()});
    return "X-Relay-CSRF: " + session.body.value("csrf", "");
  }
  Response post(const std::string& path, const json& body) {
    return send("POST", path, {auth(), csrf(), "Content-Type: application/json"}, body.dump());
  }
  std::string addDlq(long long ms, const std::string& kind, const std::string& event,
                     const std::string& app = "shop", const std::string& handler = "bin/pay.sh") {
    const std::string id = std::to_string(ms) + "-0";
    auto added = redis_->command({"XADD", "relay:events:dlq", id, "original_id", "5-0", "event",
                                  event, "reason", kind == "handler" ? "exit 3" : kind + ": bad",
                                  "kind", kind, "app", app, "handler", handler, "handler_attempts",
                                  kind == "handler" ? "2" : "0"});
    EXPECT_TRUE(added.ok());
    return id;
  }
  long long dlqLength() { return *redis_->command({"XLEN", "relay:events:dlq"})->integer(); }
  json waitForJob(long long job) {
    for (int i = 0; i < 200; ++i) {
      const Response status = send("GET", "/api/jobs?id=" + std::to_string(job), {auth()});
      if (status.body.value("state", "") == "done") return status.body;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return {};
  }

  relay::testing::TempDir apps_;
  std::unique_ptr<redis::Connection> redis_;
  ConsoleConfig config_;
  std::ostringstream log_;
  SystemClock clock_;
  SystemRandom random_;
  std::unique_ptr<Console> console_;
};

TEST_F(ConsoleServerTest, ServesItsEmbeddedPagesWithAPolicyAndNoInlineScript) {
  start();
  const Response index = send("GET", "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_NE(index.head.find("Content-Security-Policy: default-src 'self'"), std::string::npos);
  EXPECT_NE(index.head.find("Content-Type: text/html"), std::string::npos);
  const Response script = send("GET", "/js/main.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_NE(script.head.find("Content-Type: text/javascript"), std::string::npos);
  EXPECT_EQ(send("GET", "/vendor/uplot/uPlot.iife.min.js").status, 200);
  EXPECT_EQ(send("GET", "/vendor/uplot/LICENSE").status, 200);
  EXPECT_EQ(send("GET", "/nope.js").status, 404);
  EXPECT_EQ(send("GET", "/", {"Host: evil.example"}).status, 400);  // DNS rebinding
}

TEST_F(ConsoleServerTest, EveryApiReadNeedsTheTokenAndLoginSetsAnHttpOnlyCookie) {
  start();
  EXPECT_EQ(send("GET", "/api/dlq").status, 401);
  EXPECT_EQ(send("GET", "/api/overview").status, 401);
  const Response anonymous = send("GET", "/api/session");
  EXPECT_EQ(anonymous.body["authenticated"], false);
  EXPECT_FALSE(anonymous.body.contains("csrf"));
  EXPECT_EQ(send("POST", "/api/login", {"Content-Type: application/json"},
                 json{{"token", "wrong-token-0123456789"}}.dump())
                .status,
            401);
  const Response login = send("POST", "/api/login", {"Content-Type: application/json"},
                              json{{"token", kToken}}.dump());
  EXPECT_EQ(login.status, 200);
  const std::size_t at = login.head.find("Set-Cookie: relay_console=");
  ASSERT_NE(at, std::string::npos) << login.head;
  const std::string cookie = login.head.substr(at + 12, login.head.find(';', at) - at - 12);
  EXPECT_NE(login.head.find("HttpOnly; SameSite=Strict"), std::string::npos);
  // The cookie is a random session id, never the token; the token is no cookie.
  EXPECT_EQ(cookie.find(kToken), std::string::npos);
  EXPECT_EQ(send("GET", "/api/dlq", {"Cookie: " + cookie}).status, 200);
  EXPECT_EQ(send("GET", "/api/dlq", {std::string("Cookie: relay_console=") + kToken}).status, 401);
  EXPECT_EQ(
      send("POST", "/api/logout", {"Content-Type: application/json", "Cookie: " + cookie}).status,
      200);
  EXPECT_EQ(send("GET", "/api/dlq", {"Cookie: " + cookie}).status, 401);
  EXPECT_EQ(log_.str().find(kToken), std::string::npos);  // never logged
}

TEST_F(ConsoleServerTest, AMutationWithoutTheTokensOrFromAnotherSiteIsRefusedAndChangesNothing) {
  start();
  const std::string id = addDlq(1000, "handler", R"({"kind":"order"})");
  const std::string body = json{{"ids", {id}}}.dump();
  const std::string type = "Content-Type: application/json";
  EXPECT_EQ(send("POST", "/api/dlq/delete", {type}, body).status, 401);
  EXPECT_EQ(send("POST", "/api/dlq/delete", {auth(), type}, body).status, 403);
  EXPECT_EQ(send("POST", "/api/dlq/delete", {auth(), "X-Relay-CSRF: guess", type}, body).status,
            403);
  EXPECT_EQ(
      send("POST", "/api/dlq/delete", {auth(), csrf(), type, "Origin: http://evil.example"}, body)
          .status,
      403);
  EXPECT_EQ(
      send("POST", "/api/dlq/delete", {auth(), csrf(), type, "Sec-Fetch-Site: cross-site"}, body)
          .status,
      403);
  EXPECT_EQ(
      send("POST", "/api/dlq/delete", {auth(), csrf(), "Content-Type: text/plain"}, body).status,
      415);
  EXPECT_EQ(send("GET", "/api/dlq/delete", {auth()}).status, 405);
  EXPECT_EQ(dlqLength(), 1);
  EXPECT_EQ(post("/api/dlq/delete", {{"ids", {id}}}).body["removed"], 1);
  EXPECT_EQ(dlqLength(), 0);
}

TEST_F(ConsoleServerTest, FailedLoginsAreLimited) {
  start();
  const auto attempt = [this](const std::string& token) {
    return send("POST", "/api/login", {"Content-Type: application/json"},
                json{{"token", token}}.dump());
  };
  for (int i = 0; i < 5; ++i) EXPECT_EQ(attempt("wrong-token-0123456789").status, 401);
  const Response limited = attempt(kToken);  // right, but too late
  EXPECT_EQ(limited.status, 429);
  EXPECT_NE(limited.head.find("Retry-After: "), std::string::npos);
}

// docs/console.md "JSON API": bodies pass the event decoder's limits before anything reads
// them: a 700,000-deep array is refused (it crashed the console), the console serves on.
TEST_F(ConsoleServerTest, ADeeplyNestedBodyIsRefusedAndTheConsoleServesOn) {
  start();
  const std::string deep = std::string(700'000, '[') + std::string(700'000, ']');
  const std::string body = R"({"filter":)" + deep + R"(,"upto":"1-0","expected":0})";
  const Response refused =
      send("POST", "/api/dlq/delete", {auth(), csrf(), "Content-Type: application/json"}, body);
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.value("error", "").find("nested deeper than 64 levels"), std::string::npos)
      << refused.body.dump();
  EXPECT_EQ(send("GET", "/api/session", {auth()}).status, 200);
  const std::string play = R"({"event":"{}","x":)" + deep + "}";
  EXPECT_EQ(
      send("POST", "/api/playground", {auth(), "Content-Type: application/json"}, play).status,
      400);
}

TEST_F(ConsoleServerTest, AFilterTakesOnlyItsKeysEachAScalarOfItsType) {
  start();
  addDlq(1000, "handler", R"({"kind":"order"})");
  const auto remove = [this](const json& filter) {
    return post("/api/dlq/delete", {{"filter", filter}, {"upto", "1000-0"}, {"expected", 0}});
  };
  EXPECT_EQ(remove({{"app", {"shop"}}}).body.value("error", ""),
            "filter.app: expected a string, got array");
  EXPECT_EQ(remove({{"app", {{"nested", 1}}}}).status, 400);
  EXPECT_EQ(remove({{"since", 1.5}}).status, 400);
  EXPECT_EQ(remove({{"colour", "red"}}).status, 400);
  // Unix milliseconds as a number are fine; this filter selects nothing, as confirmed.
  EXPECT_EQ(remove({{"app", "none"}, {"since", 1000}}).body["removed"], 0);
  EXPECT_EQ(dlqLength(), 1);
}

// A malformed event 10,000 levels deep (20 KB) is shown as recorded: no pretty-printed copy
// (whose indentation grew with the square of the depth: 200 MB), the decoder's reason instead.
TEST_F(ConsoleServerTest, TheEntryOfADeeplyNestedEventIsShownAsRecordedAndSmall) {
  start();
  const std::string deep = std::string(10'000, '[') + std::string(10'000, ']');
  const std::string id = addDlq(1000, "malformed", deep, "-", "-");
  const Response entry = send("GET", "/api/dlq/entry?id=" + id, {auth()});
  EXPECT_EQ(entry.status, 200);
  EXPECT_TRUE(entry.body["event_pretty"].is_null());
  EXPECT_EQ(entry.body["event"], deep);
  EXPECT_NE(entry.body.value("event_error", "").find("nested deeper than 64 levels"),
            std::string::npos);
  EXPECT_LT(entry.body.dump().size(), 4 * deep.size());
  // A well-formed event is still pretty-printed.
  const std::string plain = addDlq(2000, "handler", R"({"kind":"order","n":[1,2]})");
  EXPECT_EQ(send("GET", "/api/dlq/entry?id=" + plain, {auth()}).body["event_pretty"],
            "{\n  \"kind\": \"order\",\n  \"n\": [\n    1,\n    2\n  ]\n}");
}

TEST_F(ConsoleServerTest, ReadOnlyServesNoMutationEndpointAtAll) {
  start(/*read_only=*/true);
  addDlq(1000, "handler", "{}");
  const Response session = send("GET", "/api/session", {auth()});
  EXPECT_EQ(session.body["read_only"], true);
  EXPECT_FALSE(session.body.contains("csrf"));
  EXPECT_EQ(send("POST", "/api/dlq/delete", {auth(), "Content-Type: application/json"},
                 R"({"ids":["1000-0"]})")
                .status,
            404);
  EXPECT_EQ(send("POST", "/api/dlq/replay", {auth(), "Content-Type: application/json"},
                 R"({"ids":["1000-0"]})")
                .status,
            404);
  EXPECT_EQ(send("GET", "/api/dlq", {auth()}).status, 200);
  EXPECT_EQ(dlqLength(), 1);
}

// POST /api/cancel (docs/console.md "JSON API"): the store's cancel verb per named
// invocation, with `relay cancel`'s results; a guarded mutation like the DLQ actions, absent in
// read-only mode; a body of another shape is refused naming what was wrong, nothing changed.
TEST_F(ConsoleServerTest, CancelRunsTheCancelVerbPerInvocationAndRefusesOtherBodies) {
  start();
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "$", "MKSTREAM"}).ok());
  const std::string unread(
      *redis_->command({"XADD", "events", "*", "event", R"({"kind":"order"})"})->string());
  const json body = {{"invocations",
                      {{{"id", unread}, {"invocation", "shop/bin/pay.sh"}},
                       {{"id", "1-0"}, {"invocation", "*"}}}}};
  EXPECT_EQ(
      send("POST", "/api/cancel", {auth(), "Content-Type: application/json"}, body.dump()).status,
      403);  // no CSRF token: refused, nothing recorded
  EXPECT_EQ(*redis_->command({"EXISTS", "relay:events:inv:relay:" + unread})->integer(), 0);
  const Response done = post("/api/cancel", body);
  ASSERT_EQ(done.status, 200) << done.body.dump();
  ASSERT_EQ(done.body["results"].size(), 2u) << done.body.dump();
  EXPECT_EQ(done.body["results"][0]["message_id"], unread);
  EXPECT_EQ(done.body["results"][0]["invocation"], "shop/bin/pay.sh");
  EXPECT_EQ(done.body["results"][0]["result"], "requested");
  EXPECT_EQ(done.body["results"][1]["result"], "not_found");
  // The request waits in the message's state for the first worker that reads it.
  auto kept =
      redis_->command({"HGET", "relay:events:inv:relay:" + unread, "relay:cancel:shop/bin/pay.sh"});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(std::string(*kept->string()).rfind("0 console-", 0), 0u);
  for (const json& bad :
       {json{{"invocations", json::array()}},
        json{{"invocations", {{{"id", "x"}, {"invocation", "*"}}}}},
        json{{"invocations", {{{"id", "1-0"}, {"invocation", "shop"}}}}},
        json{{"invocations", {{{"id", "1-0"}, {"invocation", "*"}}}}, {"dead_letter", "yes"}},
        json{{"invocations", {{{"id", "1-0"}, {"invocation", "*"}}}}, {"force", true}}}) {
    const Response refused = post("/api/cancel", bad);
    EXPECT_EQ(refused.status, 400) << bad.dump();
    EXPECT_FALSE(refused.body.value("error", "").empty()) << refused.body.dump();
  }
}

TEST_F(ConsoleServerTest, ReadOnlyHasNoCancel) {
  start(/*read_only=*/true);
  EXPECT_EQ(send("POST", "/api/cancel", {auth(), "Content-Type: application/json"},
                 R"({"invocations":[{"id":"1-0","invocation":"*"}]})")
                .status,
            404);
}

TEST_F(ConsoleServerTest, APausedAppIsShownUnavailableBecausePausedUntilResumed) {
  start();
  const auto shop = [this]() -> json {
    const Response apps = send("GET", "/api/apps", {auth()});
    EXPECT_EQ(apps.status, 200);
    for (const json& app : apps.body["apps"]) {
      if (app["name"] == "shop") return app;
    }
    return {};
  };
  EXPECT_EQ(shop()["available"], true);
  // What `relay app pause shop` writes (docs/cli.md "Pausing an app").
  ASSERT_TRUE(redis_->command({"SADD", "relay:events:paused", "shop"}).ok());
  EXPECT_EQ(shop()["available"], false);
  EXPECT_EQ(shop()["reason"], "paused");
  EXPECT_EQ(shop()["detail"]["reason"], "paused");
  ASSERT_TRUE(redis_->command({"SREM", "relay:events:paused", "shop"}).ok());
  EXPECT_EQ(shop()["available"], true);
  EXPECT_EQ(shop()["reason"], "");
}

TEST_F(ConsoleServerTest, TheDeadLetterListFiltersCountsAndPages) {
  start();
  for (int i = 1; i <= 5; ++i) {
    addDlq(1000 * i, "handler", R"({"kind":"order","id":"A-)" + std::to_string(i) + "\"}");
  }
  addDlq(6000, "malformed", "{oops", "-", "-");
  Response page = send("GET", "/api/dlq?kind=handler&limit=2", {auth()});
  ASSERT_EQ(page.status, 200) << page.body.dump();
  EXPECT_EQ(page.body["total"], 5);
  EXPECT_EQ(page.body["length"], 6);
  EXPECT_EQ(page.body["entries"][0]["id"], "5000-0");
  EXPECT_EQ(page.body["next"], "4000-0");
  const std::string upto = page.body["upto"];
  page = send("GET", "/api/dlq?kind=handler&limit=2&upto=" + upto + "&before=4000-0", {auth()});
  EXPECT_EQ(page.body["entries"][0]["id"], "3000-0");
  EXPECT_EQ(page.body["entries"][1]["id"], "2000-0");
  page = send("GET", "/api/dlq?q=a-3&since=2500&until=1970-01-01T00:00:03.5Z", {auth()});
  ASSERT_EQ(page.body["entries"].size(), 1u);
  EXPECT_EQ(page.body["entries"][0]["id"], "3000-0");
  EXPECT_EQ(send("GET", "/api/dlq?since=tomorrow", {auth()}).status, 400);
  EXPECT_EQ(send("GET", "/api/dlq?limit=0", {auth()}).status, 400);
  const Response detail = send("GET", "/api/dlq/entry?id=6000-0", {auth()});
  EXPECT_EQ(detail.body["replayable"], false);
  EXPECT_EQ(send("GET", "/api/dlq/entry?id=7000-0", {auth()}).status, 404);
}

TEST_F(ConsoleServerTest, BulkDeleteRemovesExactlyTheConfirmedSelection) {
  start();
  addDlq(1000, "handler", R"({"id":"keep-1"})");
  const std::string a = addDlq(2000, "malformed", "{x", "-", "-");
  addDlq(3000, "handler", R"({"id":"keep-2"})");
  const std::string b = addDlq(4000, "malformed", "{y", "-", "-");
  const Response listed = send("GET", "/api/dlq?kind=malformed", {auth()});
  const std::string upto = listed.body["upto"];
  EXPECT_EQ(listed.body["total"], 2);
  // Something new that the filter also selects arrives after the operator looked.
  const std::string later = addDlq(5000, "malformed", "{z", "-", "-");
  // A confirmation for another count is refused: the operator did not see that selection.
  Response refused = post("/api/dlq/delete",
                          {{"filter", {{"kind", "malformed"}}}, {"upto", upto}, {"expected", 3}});
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(dlqLength(), 5);
  Response done = post("/api/dlq/delete",
                       {{"filter", {{"kind", "malformed"}}}, {"upto", upto}, {"expected", 2}});
  EXPECT_EQ(done.status, 200) << done.body.dump();
  EXPECT_EQ(done.body["removed"], 2);
  auto left = redis_->command({"XRANGE", "relay:events:dlq", "-", "+"});
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < left->size(); ++i) ids.emplace_back(*left->at(i)->at(0)->string());
  EXPECT_EQ(ids, (std::vector<std::string>{"1000-0", "3000-0", later}));
}

TEST_F(ConsoleServerTest, ReplayRunsHandlerEntriesAndRefusesTheOthersRunningNothing) {
  start();
  const std::string good = addDlq(1000, "handler", R"({"kind":"order"})");
  const std::string malformed = addDlq(2000, "malformed", "{oops", "-", "-");
  // An occurrence whose schedule was unknown names no handler: nothing could run it.
  const std::string schedule = addDlq(3000, "schedule", "{}", "-", "-");
  Response single = post("/api/dlq/replay", {{"ids", {schedule}}});
  EXPECT_EQ(single.status, 422);
  EXPECT_NE(single.body["error"].get<std::string>().find("a malformed schedule occurrence"),
            std::string::npos);
  Response job =
      post("/api/dlq/replay", {{"filter", json::object()}, {"upto", "3000-0"}, {"expected", 3}});
  ASSERT_EQ(job.status, 202) << job.body.dump();
  const json status = waitForJob(job.body["job"]);
  EXPECT_EQ(status["succeeded"], 1);
  EXPECT_EQ(status["refused"], 2);
  EXPECT_EQ(status["total"], 3);
  for (const json& result : status["results"]) {
    if (result["id"] == good) {
      EXPECT_NE(result["output"].get<std::string>().find("paid"), std::string::npos);
    }
  }
  auto left = redis_->command({"XRANGE", "relay:events:dlq", "-", "+"});
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ(*left->at(0)->at(0)->string(), malformed);
  EXPECT_EQ(*left->at(1)->at(0)->string(), schedule);
}

TEST_F(ConsoleServerTest, TheOverviewSumsWhatEveryWorkerReported) {
  start();
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(redis_->command({"XADD", "events", "*", "event", "{}"}).ok());
  ASSERT_TRUE(
      redis_
          ->command({"XREADGROUP", "GROUP", "relay", "w1", "COUNT", "2", "STREAMS", "events", ">"})
          .ok());
  ASSERT_TRUE(
      redis_->command({"SET", "relay:events:worker:relay:w1", R"({"runtime":"process"})"}).ok());
  const long long minute =
      std::chrono::duration_cast<std::chrono::minutes>(clock_.now().time_since_epoch()).count();
  ASSERT_TRUE(redis_
                  ->command({"HSET", "relay:events:minute:" + std::to_string(minute),
                             "events:matched", "7", "invocations:failed", "2"})
                  .ok());
  addDlq(1000, "handler", "{}");
  const Response overview = send("GET", "/api/overview?minutes=5", {auth()});
  ASSERT_EQ(overview.status, 200) << overview.body.dump();
  EXPECT_EQ(overview.body["stream"]["length"], 3);
  EXPECT_EQ(overview.body["group"]["pending"], 2);
  EXPECT_EQ(overview.body["group"]["lag"], 1);
  EXPECT_EQ(overview.body["group"]["oldest_pending"]["reason"]["kind"], "no_state");
  EXPECT_EQ(overview.body["group"]["oldest_pending"]["consumer"], "w1");
  EXPECT_TRUE(overview.body["trim_held_back"].is_null());  // both pending entries are recent
  EXPECT_EQ(overview.body["dlq"]["length"], 1);
  ASSERT_EQ(overview.body["consumers"].size(), 1u);
  EXPECT_EQ(overview.body["consumers"][0]["health"], "healthy");
  EXPECT_EQ(overview.body["consumers"][0]["worker"]["runtime"], "process");
  EXPECT_EQ(overview.body["throughput"]["minutes"].size(), 5u);
  EXPECT_EQ(overview.body["throughput"]["series"]["events:matched"].back(), 7);
  EXPECT_EQ(send("GET", "/api/overview?minutes=5000", {auth()}).status, 400);
}

TEST_F(ConsoleServerTest, TheOverviewNamesThePendingEntryHoldingTrimmingBack) {
  start();
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  ASSERT_TRUE(redis_->command({"XADD", "events", "1000-0", "event", "{}"}).ok());
  ASSERT_TRUE(redis_->command({"XADD", "events", "*", "event", "{}"}).ok());
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "w1", "STREAMS", "events", ">"}).ok());
  ASSERT_TRUE(redis_->command({"SADD", "relay:events:paused:relay", "shop"}).ok());
  ASSERT_TRUE(redis_
                  ->command({"HSET", "relay:events:inv:relay:1000-0", "relay:plan",
                             "e 3 1000 shop/bin/a.sh\n"})
                  .ok());
  const Response overview = send("GET", "/api/overview?minutes=5", {auth()});
  ASSERT_EQ(overview.status, 200) << overview.body.dump();
  EXPECT_EQ(overview.body["group"]["oldest_pending"]["id"], "1000-0");
  EXPECT_EQ(overview.body["group"]["oldest_pending"]["reason"]["kind"], "paused");
  const auto& held = overview.body["trim_held_back"];
  ASSERT_TRUE(held.is_object()) << overview.body.dump();
  EXPECT_EQ(held["group"], "relay");
  EXPECT_EQ(held["message"]["id"], "1000-0");
  EXPECT_EQ(held["message"]["reason"]["app"], "shop");
}

TEST_F(ConsoleServerTest, PendingShowsEachMessagesInvocationsFromTheirState) {
  start();
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  auto id = redis_->command({"XADD", "events", "*", "event", R"({"kind":"order"})"});
  const std::string message(*id->string());
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "w1", "STREAMS", "events", ">"}).ok());
  ASSERT_TRUE(redis_
                  ->command({"HSET", "relay:events:inv:relay:" + message, "shop/bin/pay.sh",
                             "failed:1:1790000060000"})
                  .ok());
  const Response pending = send("GET", "/api/pending", {auth()});
  ASSERT_EQ(pending.status, 200) << pending.body.dump();
  EXPECT_EQ(pending.body["count"], 1);
  const json& entry = pending.body["entries"][0];
  EXPECT_EQ(entry["id"], message);
  EXPECT_EQ(entry["consumer"], "w1");
  EXPECT_EQ(entry["event_preview"], R"({"kind":"order"})");
  EXPECT_EQ(entry["invocations"][0]["state"], "failed");
  EXPECT_EQ(entry["invocations"][0]["next_attempt_ms"], 1790000060000);
}

// docs/apps.md "Flow control": what the start script records for a waiting invocation, read back
// over HTTP: its reason and earliest start, in the invocation and in the message's reason.
TEST_F(ConsoleServerTest, PendingShowsWhyAnInvocationWaitsForItsFlowControl) {
  start();
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  auto id = redis_->command({"XADD", "events", "*", "event", R"({"kind":"order"})"});
  const std::string message(*id->string());
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "w1", "STREAMS", "events", ">"}).ok());
  const std::string state = "relay:events:inv:relay:" + message;
  ASSERT_TRUE(redis_
                  ->command({"HSET", state, "relay:plan",
                             "e 3 30000 shop/bin/pay.sh\ne 1 30000 shop/bin/sync.sh\n",
                             "relay:wait:shop/bin/pay.sh", "throttled:4102444800000",
                             "relay:wait:shop/bin/sync.sh", "key_busy:0"})
                  .ok());
  const Response pending = send("GET", "/api/pending", {auth()});
  ASSERT_EQ(pending.status, 200) << pending.body.dump();
  const json& invocations = pending.body["entries"][0]["invocations"];
  ASSERT_EQ(invocations.size(), 2u) << invocations.dump();
  EXPECT_EQ(invocations[0]["state"], "planned");
  EXPECT_EQ(invocations[0]["wait"]["reason"], "throttled");
  EXPECT_EQ(invocations[0]["wait"]["until_ms"], 4102444800000);
  EXPECT_EQ(invocations[1]["wait"]["reason"], "key_busy");
  EXPECT_EQ(invocations[1]["wait"]["until_ms"], 0);
  // The overview explains the oldest message by its first waiting invocation.
  const Response overview = send("GET", "/api/overview", {auth()});
  ASSERT_EQ(overview.status, 200) << overview.body.dump();
  const json& oldest = overview.body["group"]["oldest_pending"];
  EXPECT_EQ(oldest["reason"]["kind"], "throttled") << oldest.dump();
  EXPECT_EQ(oldest["reason"]["until_ms"], 4102444800000);
  EXPECT_NE(oldest["description"].get<std::string>().find(
                "shop/bin/pay.sh is throttled: its turn starts at 2100-01-01T00:00:00Z"),
            std::string::npos)
      << oldest.dump();
  EXPECT_EQ(overview.body["throughput"]["series"]["invocations:deferred"].size(),
            overview.body["throughput"]["minutes"].size());
}

TEST(ConsoleBinary, RefusesANonLoopbackAddressWithoutATokenInOneLine) {
  const auto run = relay::testing::runRelay(
      {"console"}, {"RELAY_CONSOLE_ADDR=0.0.0.0:0", "RELAY_CONSOLE_TOKEN="});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "relay console: RELAY_CONSOLE_ADDR=0.0.0.0:0 is not a loopback address: set "
            "RELAY_CONSOLE_TOKEN (at least 16 characters) to serve the console there\n");
}

}  // namespace
}  // namespace relay::console
