// docs/pipeline.md "Dead-letter entries" and the malformed-message rules ("One message"),
// against a real redis-server.
#include <gtest/gtest.h>

#include "integration/stream/pipeline_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::minutes;

constexpr const char* kApp = R"(runtime: exec
events:
  - handler: bin/a.sh
    pattern: {kind: [order]}
    retries: 1
)";

class DeadLetter : public PipelineTest {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    writeApp("alpha", kApp, {"bin/a.sh"});
    writeApp("beta", kApp, {"bin/a.sh"});
    writeApp("gamma", kApp, {"bin/a.sh"});
  }
  // Drives every invocation of a message through its attempts (retries: 1, so 2 attempts).
  void exhaustAll() {
    readOnce();
    waitForBackoff();
    reclaim();
  }
};

TEST_F(DeadLetter, MalformedMessagesGoStraightToTheDlqWithoutRunningAHandler) {
  build();
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"payload", "{}"}, "no event field"},
      {{"event", "{not json"}, "malformed: "},
      {{"event", "[1,2,3]"}, "malformed: "},
      {{"event", "\"just a string\""}, "malformed: "},
      {{"event", "{\"a\":" + deep + "}"}, "malformed: "},
      {{"event", std::string("{\"k\":\"\xff\xfe\"}")}, "malformed: "},
  };
  for (const auto& [fields, reason] : cases) xaddFields(fields);
  EXPECT_EQ(readOnce(), static_cast<int>(cases.size()));
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 0);
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_NE(entries[i].at("reason").find(cases[i].second), std::string::npos)
        << entries[i].at("reason");
    EXPECT_EQ(entries[i].at("kind"), "malformed");
    EXPECT_EQ(entries[i].at("app"), "-");
    EXPECT_EQ(entries[i].at("handler"), "-");
    EXPECT_EQ(entries[i].at("handler_attempts"), "0");
  }
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "malformed"}}),
            static_cast<double>(cases.size()));
}

TEST_F(DeadLetter, SixtyFourLevelsAreFineSixtyFiveAreMalformed) {
  build();
  const std::string ok = "{\"a\":" + std::string(63, '[') + std::string(63, ']') + "}";
  xadd(ok);
  readOnce();
  EXPECT_TRUE(dlqEntries().empty());
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 1);
}

TEST_F(DeadLetter, OversizedEventIsDeadLetteredWithASummary) {
  max_event_bytes_ = 1024;
  build();
  const std::string big = "{\"kind\":\"order\",\"pad\":\"" + std::string(5000, 'x') + "\"}";
  xadd(big);
  readOnce();
  EXPECT_TRUE(runtime_.runs().empty());
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_NE(entries[0].at("reason").find(std::to_string(big.size()) + " bytes"), std::string::npos)
      << entries[0].at("reason");
  EXPECT_NE(entries[0].at("reason").find("1KiB"), std::string::npos);
  EXPECT_LT(entries[0].at("event").size(), 400u);
  EXPECT_EQ(entries[0].at("kind"), "oversized");
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "oversized"}}), 1);
}

TEST_F(DeadLetter, ExhaustedInvocationsGetOneCorrectlyAttributedEntryEach) {
  build();
  for (const char* app : {"alpha", "beta", "gamma"}) {
    runtime_.failAlways(std::string(app) + "/bin/a.sh", std::string("exit 7 from ") + app);
  }
  const std::string event = R"({"kind":"order"})";
  const std::string id = xadd(event);
  exhaustAll();
  EXPECT_EQ(pendingCount(), 0);
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), 3u);
  const char* apps[] = {"alpha", "beta", "gamma"};
  for (int i = 0; i < 3; ++i) {
    const auto& e = entries[i];
    EXPECT_EQ(e.at("original_stream"), "events");
    EXPECT_EQ(e.at("original_id"), id);
    EXPECT_EQ(e.at("group"), "relay");
    EXPECT_EQ(e.at("consumer"), "worker-1");
    EXPECT_EQ(e.at("event"), event);
    EXPECT_EQ(e.at("reason"), std::string("exit 7 from ") + apps[i]);
    EXPECT_EQ(e.at("kind"), "handler");
    EXPECT_EQ(e.at("app"), apps[i]);
    EXPECT_EQ(e.at("handler"), "bin/a.sh");
    EXPECT_EQ(e.at("handler_attempts"), "2");
    EXPECT_EQ(e.at("deliveries"), "2");
    EXPECT_EQ(e.at("timestamp").size(), 24u) << e.at("timestamp");
    EXPECT_EQ(marker(id, std::string(apps[i]) + "/bin/a.sh").substr(0, 12), "exhausted:2:");
  }
  EXPECT_EQ(metrics_.value("relay_dlq_entries_total", {{"reason", "handler"}}), 3);
}

TEST_F(DeadLetter, AMessageIsDeadLetteredOnlyWhenEveryInvocationIsTerminal) {
  build();
  runtime_.failAlways("alpha/bin/a.sh");
  runtime_.script("beta/bin/a.sh", {"exit 1", "exit 1", ""});
  writeApp("beta", R"(runtime: exec
events:
  - handler: bin/a.sh
    pattern: {kind: [order]}
    retries: 3
)",
           {"bin/a.sh"});
  registry_->reloadAll();
  xadd(R"({"kind":"order"})");
  exhaustAll();  // alpha exhausted, beta failed twice
  EXPECT_TRUE(dlqEntries().empty());
  EXPECT_EQ(pendingCount(), 1);
  waitForBackoff();
  reclaim();  // beta succeeds on attempt 3
  EXPECT_EQ(dlqEntries().size(), 1u);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_F(DeadLetter, FailedDlqWriteLeavesThePendingMessageToBeReRouted) {
  build();
  runtime_.failAlways("alpha/bin/a.sh");
  ASSERT_TRUE(redis_->command({"SET", "relay:events:dlq", "in the way"}).ok());
  const std::string id = xadd(R"({"kind":"order"})");
  exhaustAll();
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_EQ(marker(id, "alpha/bin/a.sh").substr(0, 12), "exhausted:2:");
  // The log says what happened: owed, not written.
  EXPECT_NE(log_.str().find("exhausted its retries: dead-letter entry owed"), std::string::npos);
  EXPECT_EQ(log_.str().find("exhausted its retries: dead-lettered"), std::string::npos);
  ASSERT_TRUE(redis_->command({"DEL", "relay:events:dlq"}).ok());
  reclaim();
  EXPECT_EQ(pendingCount(), 0);
  ASSERT_EQ(dlqEntries().size(), 1u);  // alpha's: beta and gamma succeeded
  EXPECT_EQ(dlqEntries()[0].at("app"), "alpha");
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 2);  // re-routed, not re-run
}

TEST_F(DeadLetter, RedeliveryAfterAPartialDlqWritesOnlyTheMissingEntries) {
  build();
  for (const char* app : {"alpha", "beta", "gamma"})
    runtime_.failAlways(std::string(app) + "/bin/a.sh");
  // The DLQ cannot be written while the last attempts run: all three entries are owed.
  ASSERT_TRUE(redis_->command({"SET", "relay:events:dlq", "x"}).ok());
  const std::string id = xadd(R"({"kind":"order"})");
  exhaustAll();
  ASSERT_TRUE(redis_->command({"DEL", "relay:events:dlq"}).ok());
  for (const char* app : {"alpha", "beta", "gamma"}) {
    EXPECT_EQ(marker(id, std::string(app) + "/bin/a.sh").substr(0, 12), "exhausted:2:");
  }
  // The crash: only two of the owed entries get written before the worker dies.
  invocation::DlqEntry written;
  written.original_id = id;
  written.app = "alpha";
  ASSERT_EQ(store_->writeDlq(id, "alpha/bin/a.sh", written)->kind,
            invocation::DlqVerdict::Kind::kWritten);
  written.app = "beta";
  ASSERT_EQ(store_->writeDlq(id, "beta/bin/a.sh", written)->kind,
            invocation::DlqVerdict::Kind::kWritten);
  ASSERT_EQ(dlqEntries().size(), 2u);
  EXPECT_EQ(pendingCount(), 1);
  reclaim();  // the redelivery
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[2].at("app"), "gamma");
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(runtime_.runsOf("gamma/bin/a.sh"), 2);  // re-routed, not re-run
}

}  // namespace
}  // namespace relay::stream::testing
