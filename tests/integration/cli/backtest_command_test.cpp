// `relay backtest`: the real binary against a real redis-server whose dataset must come out
// byte-identical (DEBUG DIGEST), with candidate and deployed apps roots in temp dirs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_digest.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

using nlohmann::json;

constexpr const char* kDeployed = R"(runtime: exec
events:
  - handler: bin/a.sh
    pattern: {kind: [order]}
  - handler: bin/old.sh
    pattern: {kind: [refund]}
)";

constexpr const char* kCandidate = R"(runtime: exec
events:
  - handler: bin/a.sh
    pattern: {kind: [order], amount: [{gt: 100}]}
  - handler: bin/new.sh
    pattern: {kind: [refund, return]}
)";

class Backtest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    deployed_.write("shop/template.yaml", kDeployed);
    candidate_.write("shop/template.yaml", kCandidate);
    // Templates name existing handler files; none ever runs here.
    for (TempDir* root : {&deployed_, &candidate_}) {
      for (const char* handler : {"a", "old", "new", "fresh"}) {
        root->write(std::string("shop/bin/") + handler + ".sh", "#!/bin/sh\nexit 9\n", 0755);
      }
    }
  }
  std::string add(const std::string& event, const std::string& id = "*") {
    return std::string(*redis_->command({"XADD", "events", id, "event", event})->string());
  }
  BinaryRun backtest(std::vector<std::string> args) {
    args.insert(args.begin(), {"backtest", "--apps", candidate_.path().string()});
    return runRelay(args,
                    {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + deployed_.path().string()});
  }
  // Publishes the traffic of most tests; returns the ids in publication order.
  std::vector<std::string> publishTraffic() {
    std::vector<std::string> ids;
    ids.push_back(add(R"({"kind":"order","amount":50})"));
    ids.push_back(add(R"({"kind":"order","amount":500})"));
    ids.push_back(add("not json"));
    ids.push_back(add(R"({"kind":"order","amount":700})"));
    ids.push_back(add(R"({"kind":"refund"})"));
    ids.push_back(std::string(*redis_
                                   ->command({"XADD", "events", "*", "relay_schedule",
                                              R"({"app":"shop"})", "event", "{}"})
                                   ->string()));
    ids.push_back(add(R"({"kind":"return"})"));
    ids.push_back(add(R"({"kind":"x"})"));
    return ids;
  }
  std::string digest() { return datasetDigest(*redis_); }

  std::unique_ptr<redis::Connection> redis_;
  TempDir deployed_;
  TempDir candidate_;
};

TEST_F(Backtest, CountsEachRuleOfBothTemplateSetsWithNewestSamples) {
  const std::vector<std::string> ids = publishTraffic();
  const std::string before = digest();
  const BinaryRun run = backtest({"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json out = json::parse(run.out);
  EXPECT_EQ(out["entries"], 8);
  EXPECT_EQ(out["events"], 6);
  EXPECT_EQ(out["schedules_skipped"], 1);
  EXPECT_EQ(out["malformed"], 1);
  EXPECT_EQ(out["newest_id"], ids.back());
  EXPECT_EQ(out["oldest_id"], ids.front());
  EXPECT_EQ(out["unmatched"]["candidate"], 2);  // the order of 50 and kind x
  EXPECT_EQ(out["unmatched"]["deployed"], 2);   // the return and kind x
  ASSERT_EQ(out["rules"].size(), 3u);
  const json& a = out["rules"][0];
  EXPECT_EQ(a["handler"], "bin/a.sh");
  EXPECT_EQ(a["candidate"]["matches"], 2);
  EXPECT_EQ(a["candidate"]["samples"], json({ids[3], ids[1]}));
  EXPECT_EQ(a["deployed"]["matches"], 3);
  EXPECT_EQ(a["deployed"]["samples"], json({ids[3], ids[1], ids[0]}));
  const json& added = out["rules"][1];
  EXPECT_EQ(added["handler"], "bin/new.sh");
  EXPECT_EQ(added["candidate"]["matches"], 2);
  EXPECT_TRUE(added["deployed"].is_null());
  const json& removed = out["rules"][2];
  EXPECT_EQ(removed["handler"], "bin/old.sh");
  EXPECT_TRUE(removed["candidate"].is_null());
  EXPECT_EQ(removed["deployed"]["matches"], 1);
  EXPECT_EQ(digest(), before);  // read only: nothing acknowledged, created or written
  EXPECT_EQ(redis_->command({"XINFO", "GROUPS", "events"})->size(), 0u);
}

TEST_F(Backtest, TextTableShowsTheChange) {
  publishTraffic();
  const BinaryRun run = backtest({});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("8 entries of stream events"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("6 events, 1 schedule occurrences skipped, 1 malformed"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("CANDIDATE  DEPLOYED  CHANGE"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("-1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("new rule"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("removed"), std::string::npos) << run.out;
}

TEST_F(Backtest, LastTakesTheNewestEntriesAcrossPages) {
  std::vector<std::string> ids;
  for (int i = 0; i < 1200; ++i) ids.push_back(add(R"({"kind":"order","amount":200})"));
  const BinaryRun run = backtest({"--last", "1100", "--json", "--samples", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json out = json::parse(run.out);
  EXPECT_EQ(out["entries"], 1100);
  EXPECT_EQ(out["newest_id"], ids[1199]);
  EXPECT_EQ(out["oldest_id"], ids[100]);
  EXPECT_EQ(out["rules"][0]["candidate"]["matches"], 1100);
  EXPECT_EQ(out["rules"][0]["candidate"]["samples"], json({ids[1199], ids[1198]}));
}

TEST_F(Backtest, SinceSkipsOlderEntries) {
  add(R"({"kind":"order","amount":500})", "1000-1");  // 1970: long before any --since window
  const std::string recent = add(R"({"kind":"order","amount":500})");
  const BinaryRun run = backtest({"--since", "1h", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json out = json::parse(run.out);
  EXPECT_EQ(out["entries"], 1);
  EXPECT_EQ(out["oldest_id"], recent);
}

TEST_F(Backtest, EvaluatesNowAtEachEntrysPublicationTime) {
  candidate_.write("shop/template.yaml", R"(runtime: exec
events:
  - handler: bin/fresh.sh
    pattern: {at: [{gt: "now()-1m"}]}
)");
  // 1767261600000 ms is 2026-01-01T10:00:00Z: 30 s after the first event's `at`, 10 min after
  // the second's.
  add(R"({"at":"2026-01-01T09:59:30Z"})", "1767261600000-0");
  add(R"({"at":"2026-01-01T09:50:00Z"})", "1767261600000-1");
  const BinaryRun run = backtest({"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json out = json::parse(run.out);
  EXPECT_EQ(out["rules"][0]["candidate"]["matches"], 1);
  EXPECT_EQ(out["rules"][0]["candidate"]["samples"], json({"1767261600000-0"}));
}

TEST_F(Backtest, InvalidCandidateTemplateListsEveryErrorAndReadsNothing) {
  publishTraffic();
  candidate_.write("shop/template.yaml", R"(runtime: exec
events:
  - handler: bin/a.sh
    pattern: {kind: order}
    retries: 99
)");
  const std::string before = digest();
  const BinaryRun run = backtest({});
  EXPECT_EQ(run.exit_code, 2);
  const std::string file = (candidate_.path() / "shop/template.yaml").string();
  EXPECT_NE(run.err.find(file + ":4:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(file + ":5:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("nothing was read"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(digest(), before);
}

TEST_F(Backtest, BadFlagsAreUsageErrors) {
  publishTraffic();
  const std::string before = digest();
  const BinaryRun since = backtest({"--since", "yesterday"});
  EXPECT_EQ(since.exit_code, 2);
  EXPECT_NE(since.err.find("invalid --since \"yesterday\""), std::string::npos) << since.err;
  EXPECT_EQ(backtest({"--since", "0s"}).exit_code, 2);
  EXPECT_EQ(backtest({"--since", "1h", "--last", "5"}).exit_code, 2);
  EXPECT_EQ(backtest({"--last", "0"}).exit_code, 2);
  EXPECT_EQ(runRelay({"backtest"}, {"REDIS_URI=" + server().uri()}).exit_code, 2);
  EXPECT_EQ(digest(), before);
}

TEST_F(Backtest, UnreachableRedisFailsWithExitOne) {
  const BinaryRun run =
      runRelay({"backtest", "--apps", candidate_.path().string()}, {"REDIS_URI=127.0.0.1:1"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot reach Redis"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace relay::testing
