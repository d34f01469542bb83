// `relay dlq ...` and `relay stats ...`: the real binary against a real redis-server, replays on
// the process runtime with exec handlers in a temp apps root.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "invocation/dlq_entry.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

using nlohmann::json;

constexpr const char* kDlqTemplate = R"(runtime: exec
events:
  - handler: bin/record.sh
    pattern: {kind: [order]}
    timeout: 10s
)";

class DlqCli : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    apps_.write("shop/template.yaml", kDlqTemplate);
    const std::string record = (apps_.path() / "record").string();
    apps_.write("shop/bin/record.sh",
                "#!/bin/sh\ncat > " + record + ".stdin\nenv | grep '^RELAY_' | sort > " + record +
                    ".env\necho \"handling $RELAY_MESSAGE_ID\"\n"
                    "if grep -q '\"fail\":true' " +
                    record + ".stdin; then exit 3; fi\n",
                0755);
  }
  BinaryRun relay(const std::vector<std::string>& args) {
    return runRelay(args, {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
                           "RELAY_RUNTIME=process"});
  }
  invocation::DlqEntry entry(std::string event, std::string reason = "exit 3") {
    invocation::DlqEntry dlq;
    dlq.original_stream = "events";
    dlq.original_id = "1790000000000-" + std::to_string(next_++);
    dlq.group = "relay";
    dlq.consumer = "host-1";
    dlq.event = std::move(event);
    dlq.reason = std::move(reason);
    dlq.kind = invocation::DlqKind::kHandler;
    dlq.app = "shop";
    dlq.handler = "bin/record.sh";
    dlq.deliveries = 6;
    dlq.handler_attempts = 5;
    dlq.timestamp = "2026-09-21T10:00:00.000Z";
    return dlq;
  }
  // `extra`: fields after the entry's own (the last attempt's exit reason and output tail).
  // Without `kind`, the entry is as written before Relay recorded kinds.
  std::string add(const invocation::DlqEntry& dlq,
                  const std::vector<std::pair<std::string, std::string>>& extra = {},
                  bool with_kind = true) {
    std::vector<std::string> command = {"XADD", "relay:events:dlq", "*"};
    for (const auto& [name, value] : dlq.fields()) {
      if (name == "kind" && !with_kind) continue;
      command.push_back(name);
      command.push_back(value);
    }
    for (const auto& [name, value] : extra) {
      command.push_back(name);
      command.push_back(value);
    }
    return std::string(*redis_->command(command)->string());
  }
  long long dlqLength() { return *redis_->command({"XLEN", "relay:events:dlq"})->integer(); }
  std::string recorded(const std::string& suffix) {
    std::ifstream in(apps_.path() / ("record." + suffix));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  TempDir apps_;
  std::unique_ptr<redis::Connection> redis_;
  int next_ = 0;
};

TEST_F(DlqCli, AnEmptyDlqSaysSoAndExitsZero) {
  BinaryRun run = relay({"dlq", "ls"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "the dead-letter queue relay:events:dlq is empty\n");
  run = relay({"dlq", "ls", "--json"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(json::parse(run.out), json::array());
}

TEST_F(DlqCli, LsListsNewestFirstWithAShortenedReason) {
  const std::string older = add(entry(R"({"kind":"order"})", "exit 3"));
  const std::string newer =
      add(entry(R"({"kind":"order"})", "timeout 10s " + std::string(200, 'x')));
  const BinaryRun run = relay({"dlq", "ls"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(run.out);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.rfind("ID", 0), 0u);
  for (const char* column : {"TIMESTAMP", "APP", "HANDLER", "REASON", "ATTEMPTS"}) {
    EXPECT_NE(header.find(column), std::string::npos) << header;
  }
  EXPECT_EQ(first.rfind(newer, 0), 0u) << run.out;
  EXPECT_EQ(second.rfind(older, 0), 0u) << run.out;
  EXPECT_NE(first.find("timeout 10s xxx"), std::string::npos);
  EXPECT_NE(first.find("..."), std::string::npos);
  EXPECT_LT(first.size(), 200u);
  EXPECT_NE(first.find("2026-09-21T10:00:00.000Z"), std::string::npos);
  EXPECT_NE(first.find("shop"), std::string::npos);
  EXPECT_NE(first.find("bin/record.sh"), std::string::npos);
  EXPECT_EQ(first.substr(first.size() - 1), "5");  // attempts
}

TEST_F(DlqCli, LimitShowsTheNewestAndNotesTheRest) {
  add(entry("{}"));
  add(entry("{}"));
  const std::string newest = add(entry("{}"));
  const BinaryRun run = relay({"dlq", "ls", "--limit", "1"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find(newest), std::string::npos);
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 2);  // header + one entry
  EXPECT_NE(run.err.find("showing the newest 1 of 3 entries"), std::string::npos) << run.err;
}

TEST_F(DlqCli, LsJsonGivesTheIdAndEveryField) {
  const invocation::DlqEntry dlq = entry(R"({"kind":"order","n":1})");
  const std::string id = add(dlq);
  const BinaryRun run = relay({"dlq", "ls", "--json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json list = json::parse(run.out);
  ASSERT_EQ(list.size(), 1u);
  const json& object = list[0];
  EXPECT_EQ(object["id"], id);
  for (const auto& [name, value] : dlq.fields()) {
    ASSERT_TRUE(object.contains(name)) << name;
    if (name == "deliveries" || name == "handler_attempts") {
      EXPECT_EQ(object[name].get<long long>(), std::stoll(value)) << name;
    } else {
      EXPECT_EQ(object[name], value) << name;
    }
  }
}

TEST_F(DlqCli, InspectShowsEveryFieldAndThePrettyPrintedEvent) {
  const std::string id = add(entry(R"({"kind":"order","items":[1,2]})"));
  const BinaryRun run = relay({"dlq", "inspect", id});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const std::string& line :
       {"id:                " + id, std::string("original_stream:   events"),
        std::string("original_id:       1790000000000-0"), std::string("group:             relay"),
        std::string("consumer:          host-1"), std::string("reason:            exit 3"),
        std::string("app:               shop"), std::string("handler:           bin/record.sh"),
        std::string("deliveries:        6"), std::string("handler_attempts:  5"),
        std::string("timestamp:         2026-09-21T10:00:00.000Z")}) {
    EXPECT_NE(run.out.find(line + "\n"), std::string::npos) << line << "\n" << run.out;
  }
  EXPECT_NE(run.out.find("event:\n  {\n    \"kind\": \"order\",\n    \"items\": [\n"),
            std::string::npos)
      << run.out;
}

TEST_F(DlqCli, InspectJsonIsOneObject) {
  const std::string id = add(entry(R"({"kind":"order"})"));
  const BinaryRun run = relay({"dlq", "inspect", id, "--json"});
  EXPECT_EQ(run.exit_code, 0);
  const json object = json::parse(run.out);
  EXPECT_EQ(object["id"], id);
  EXPECT_EQ(object["event"], R"({"kind":"order"})");
  EXPECT_EQ(object["handler_attempts"], 5);
}

TEST_F(DlqCli, InspectShowsANonJsonEventAsRecordedAndEscaped) {
  invocation::DlqEntry malformed = entry("{not json \x1b[2J", "malformed: invalid JSON");
  malformed.app = "-";
  malformed.handler = "-";
  const std::string id = add(malformed);
  const BinaryRun run = relay({"dlq", "inspect", id});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("event (not an event: "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("; as recorded):\n  {not json \\x1B[2J\n"), std::string::npos) << run.out;
}

// Issue 29 item 2: a malformed event 100,000 levels deep (dead-lettered as such by the worker)
// made `relay dlq inspect` overflow its stack. It is shown as recorded, with the decoder's
// reason, and never parsed past 64 levels.
TEST_F(DlqCli, InspectShowsADeeplyNestedEventAsRecorded) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  invocation::DlqEntry malformed = entry(deep, "malformed: nested deeper than 64 levels");
  malformed.kind = invocation::DlqKind::kMalformed;
  const std::string id = add(malformed);
  const BinaryRun run = relay({"dlq", "inspect", id});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("event (not an event: invalid JSON at byte 64: nested deeper than 64 "
                         "levels; as recorded, its first 65536 bytes):\n  [[["),
            std::string::npos)
      << run.out.substr(0, 2000);
  EXPECT_LT(run.out.size(), 70'000u);
  // An event at the depth limit is pretty-printed, indentation and all.
  const std::string limit = std::string(63, '[') + std::string(63, ']');
  const BinaryRun pretty = relay({"dlq", "inspect", add(entry("{\"a\":" + limit + "}"))});
  EXPECT_EQ(pretty.exit_code, 0) << pretty.err;
  EXPECT_NE(pretty.out.find("event:\n  {\n    \"a\": [\n      [\n"), std::string::npos)
      << pretty.out.substr(0, 2000);
}

// Issue 29 item 1: a DLQ entry is read like a stream entry, never whole. One of 8 MiB (someone
// XADDed it to the DLQ) is shown as its first bytes and its size, and is never replayed: only
// those bytes ever left Redis.
TEST_F(DlqCli, AHugeEntryIsShownCutAndNeverReplayed) {
  const std::string huge = R"({"kind":"order","pad":")" + std::string(8 << 20, 'x') + "\"}";
  const std::string id = add(entry(huge));
  const BinaryRun run = relay({"dlq", "inspect", id});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("event (" + std::to_string(huge.size()) +
                         " bytes, more than a reader keeps; its first 256 bytes as recorded):\n"
                         "  {\"kind\":\"order\",\"pad\":\"xxx"),
            std::string::npos)
      << run.out.substr(0, 2000);
  EXPECT_LT(run.out.size(), 4096u);
  const json object = json::parse(relay({"dlq", "inspect", id, "--json"}).out);
  EXPECT_EQ(object["cut"]["event"], huge.size());
  EXPECT_EQ(object["event"].get<std::string>().size(), 256u);
  const BinaryRun replay = relay({"dlq", "replay", id});
  EXPECT_EQ(replay.exit_code, 2);
  EXPECT_NE(replay.err.find("cannot be replayed"), std::string::npos) << replay.err;
  EXPECT_EQ(recorded("stdin"), "");  // nothing ran
  EXPECT_EQ(dlqLength(), 1);
  const BinaryRun listed = relay({"dlq", "ls", "--json"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_LT(listed.out.size(), 4096u);
}

TEST_F(DlqCli, InspectShowsTheExitReasonAndTheOutputTailLineByLineEscaped) {
  const std::string id =
      add(entry(R"({"kind":"order"})"),
          {{"exit_reason", "exit 3"},
           {"output_tail",
            "[shop/bin/record.sh] charging\tcard\n[shop/bin/record.sh] \x1b[2Jrefused "
            "(code 51)\n"}});
  const BinaryRun run = relay({"dlq", "inspect", id});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("exit_reason:       exit 3\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("output_tail (the last attempt's, its last bytes):\n"
                         "  [shop/bin/record.sh] charging\tcard\n"
                         "  [shop/bin/record.sh] \\x1B[2Jrefused (code 51)\n"),
            std::string::npos)
      << run.out;
  const json object = json::parse(relay({"dlq", "inspect", id, "--json"}).out);
  EXPECT_EQ(object["exit_reason"], "exit 3");
  EXPECT_EQ(object["output_tail"].get<std::string>().substr(0, 30),
            "[shop/bin/record.sh] charging\t");
}

TEST_F(DlqCli, UnknownIdsFailWithExit1) {
  add(entry("{}"));
  for (const char* command : {"inspect", "rm", "replay"}) {
    const BinaryRun run = relay({"dlq", command, "1-1"});
    EXPECT_EQ(run.exit_code, 1) << command;
    EXPECT_NE(run.err.find("no entry 1-1 in relay:events:dlq"), std::string::npos) << run.err;
  }
  EXPECT_EQ(dlqLength(), 1);
}

TEST_F(DlqCli, RmRemovesExactlyThatEntry) {
  const std::string keep = add(entry("{}"));
  const std::string gone = add(entry("{}"));
  BinaryRun run = relay({"dlq", "rm", gone});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "removed " + gone + " from relay:events:dlq\n");
  EXPECT_EQ(dlqLength(), 1);
  run = relay({"dlq", "rm", gone});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(redis_->command({"XRANGE", "relay:events:dlq", keep, keep})->size(), 1u);
}

TEST_F(DlqCli, ReplayRunsTheHandlerAsAReplayAndRemovesTheEntryOnSuccess) {
  const invocation::DlqEntry dlq = entry(R"({"kind":"order","fail":false})");
  const std::string id = add(dlq);
  const BinaryRun run = relay({"dlq", "replay", id});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("[shop/bin/record.sh] handling " + dlq.original_id + "\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("replayed " + id + ": shop/bin/record.sh succeeded in "),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("removed it from relay:events:dlq"), std::string::npos);
  EXPECT_EQ(dlqLength(), 0);
  EXPECT_EQ(recorded("stdin"), dlq.event);  // verbatim
  const std::string env = recorded("env");
  EXPECT_NE(env.find("RELAY_TRIGGER=replay\n"), std::string::npos) << env;
  EXPECT_NE(env.find("RELAY_MESSAGE_ID=" + dlq.original_id + "\n"), std::string::npos);
  EXPECT_NE(env.find("RELAY_INVOCATION_ID=" + dlq.original_id + "/shop/bin/record.sh\n"),
            std::string::npos);
  EXPECT_NE(env.find("RELAY_ATTEMPT=6\n"), std::string::npos);
}

TEST_F(DlqCli, AFailedReplayKeepsTheEntryAndSaysWhy) {
  const std::string id = add(entry(R"({"kind":"order","fail":true})"));
  const BinaryRun run = relay({"dlq", "replay", id});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("shop/bin/record.sh failed (exit 3"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("entry " + id + " stays"), std::string::npos) << run.err;
  EXPECT_EQ(dlqLength(), 1);
}

TEST_F(DlqCli, AMalformedEntryIsNotReplayable) {
  invocation::DlqEntry malformed = entry("{oops", "malformed: invalid JSON");
  malformed.kind = invocation::DlqKind::kMalformed;
  malformed.app = "-";
  malformed.handler = "-";
  malformed.handler_attempts = 0;
  const std::string id = add(malformed);
  const BinaryRun run = relay({"dlq", "replay", id});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("never reached a handler (malformed: invalid JSON)"), std::string::npos)
      << run.err;
  EXPECT_EQ(dlqLength(), 1);
  EXPECT_EQ(recorded("stdin"), "");  // nothing ran
}

// Issue 13 item 9: entries that never reached a handler are refused (exit 2) from their recorded
// kind, even when they name an app and a handler that exist; nothing runs, the entry stays. A
// schedule entry is refused when it names no handler (its schedule was unknown).
TEST_F(DlqCli, OversizedAndMalformedScheduleEntriesAreRefusedAndNothingRuns) {
  invocation::DlqEntry oversized =
      entry(R"({"kind":"order","pad":"xxxx)", "oversized: 300000 bytes > MAX_EVENT_BYTES 262144");
  oversized.kind = invocation::DlqKind::kOversized;
  oversized.app = "-";
  oversized.handler = "-";
  oversized.handler_attempts = 0;
  invocation::DlqEntry schedule = entry(R"({"kind":"order"})", "occurrence id does not recompute");
  schedule.kind = invocation::DlqKind::kSchedule;
  schedule.app = "-";
  schedule.handler = "-";
  schedule.handler_attempts = 0;
  for (const invocation::DlqEntry& dlq : {oversized, schedule}) {
    const std::string id = add(dlq);
    const BinaryRun run = relay({"dlq", "replay", id});
    EXPECT_EQ(run.exit_code, 2) << invocation::kindName(dlq.kind) << ": " << run.err;
    EXPECT_NE(run.err.find("relay dlq replay: entry " + id), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("never reached a handler (" + dlq.reason.substr(0, 20)),
              std::string::npos)
        << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;  // one line
  }
  EXPECT_NE(relay({"dlq", "replay", add(oversized)}).err.find("an oversized message"),
            std::string::npos);
  EXPECT_NE(relay({"dlq", "replay", add(schedule)}).err.find("a malformed schedule occurrence"),
            std::string::npos);
  EXPECT_EQ(dlqLength(), 4);
  EXPECT_EQ(recorded("stdin"), "");  // the handler never ran
}

// Issue 28: a schedule occurrence set apart before it ran (an edited cron) whose schedule was
// known names its handler: replaying it runs that handler with the recorded event.
TEST_F(DlqCli, AScheduleEntryThatNamesAHandlerIsReplayed) {
  invocation::DlqEntry schedule =
      entry(R"({"kind":"order"})",
            "malformed schedule occurrence: scheduled_at 2024-05-16T01:00:00Z is not a firing of "
            "cron \"0 4 * * *\" in UTC");
  schedule.kind = invocation::DlqKind::kSchedule;
  schedule.handler_attempts = 0;
  const BinaryRun run = relay({"dlq", "replay", add(schedule)});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(recorded("stdin"), R"({"kind":"order"})");
  EXPECT_NE(recorded("env").find("RELAY_TRIGGER=replay"), std::string::npos);
  EXPECT_NE(recorded("env").find("RELAY_ATTEMPT=1"), std::string::npos);
  EXPECT_EQ(dlqLength(), 0);
}

TEST_F(DlqCli, AnEntryWithoutAKindThatNeverRanAHandlerIsRefused) {
  invocation::DlqEntry legacy = entry(R"({"kind":"order"})", "relay_schedule: bad envelope");
  legacy.handler_attempts = 0;
  const std::string id = add(legacy, {}, /*with_kind=*/false);  // before Relay recorded kinds
  const BinaryRun run = relay({"dlq", "replay", id});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(recorded("stdin"), "");
  EXPECT_EQ(dlqLength(), 1);
}

TEST_F(DlqCli, AnEntryWithoutAKindThatRanAHandlerIsStillReplayable) {
  invocation::DlqEntry legacy = entry(R"({"kind":"order","fail":false})");
  const BinaryRun run = relay({"dlq", "replay", add(legacy, {}, /*with_kind=*/false)});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(dlqLength(), 0);
}

TEST_F(DlqCli, AnAppThatNoLongerExistsFailsClearly) {
  invocation::DlqEntry dlq = entry(R"({"kind":"order"})");
  dlq.app = "closed-shop";
  const std::string id = add(dlq);
  const BinaryRun run = relay({"dlq", "replay", id});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("app \"closed-shop\" no longer exists in " + apps_.path().string()),
            std::string::npos)
      << run.err;
  EXPECT_EQ(dlqLength(), 1);
}

TEST_F(DlqCli, AHandlerThatNoLongerExistsFailsClearly) {
  invocation::DlqEntry dlq = entry(R"({"kind":"order"})");
  dlq.handler = "bin/removed.sh";
  const std::string id = add(dlq);
  const BinaryRun run = relay({"dlq", "replay", id});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("no longer has a handler \"bin/removed.sh\""), std::string::npos)
      << run.err;
  EXPECT_EQ(dlqLength(), 1);
}

TEST_F(DlqCli, AnUnavailableRuntimeFailsWithItsReason) {
  const std::string id = add(entry(R"({"kind":"order"})"));
  const BinaryRun run =
      runRelay({"dlq", "replay", id, "--runtime", "docker"},
               {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
                "DOCKER_HOST=unix://" + apps_.path().string() + "/no.sock"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("the docker runtime cannot run shop now: "), std::string::npos) << run.err;
  EXPECT_EQ(dlqLength(), 1);
}

TEST_F(DlqCli, StatsPrintsATableAndJsonAndResetClearsThem) {
  BinaryRun run = relay({"stats"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out,
            "ready backlog: - (consumer group \"relay\" of stream \"events\" does not exist)\n"
            "no statistics recorded yet in relay:events:stats\n");
  ASSERT_TRUE(redis_
                  ->command({"HSET", "relay:events:stats", "shop/bin/record.sh:succeeded", "3",
                             "shop/bin/record.sh:failed", "1", "shop/bin/record.sh:dlq", "1",
                             "shop/bin/record.sh:duration_seconds", "2.0", "-/-:dlq", "4"})
                  .ok());
  run = relay({"stats"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "ready backlog: - (consumer group \"relay\" of stream \"events\" does not exist)\n"
            "APP   HANDLER        SUCCEEDED  FAILED  DLQ  RUNS  TOTAL TIME  AVG TIME\n"
            "-     -              0          0       4    0     0.000s      -\n"
            "shop  bin/record.sh  3          1       1    4     2.000s      0.500s\n");
  run = relay({"stats", "--json"});
  EXPECT_EQ(run.exit_code, 0);
  const json rows = json::parse(run.out)["handlers"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["app"], "shop");
  EXPECT_EQ(rows[1]["succeeded"], 3);
  EXPECT_EQ(rows[1]["failed"], 1);
  EXPECT_EQ(rows[1]["dlq"], 1);
  EXPECT_EQ(rows[1]["runs"], 4);
  EXPECT_DOUBLE_EQ(rows[1]["duration_seconds"].get<double>(), 2.0);
  EXPECT_EQ(rows[1]["deferred"], 0);
  EXPECT_EQ(rows[1]["deduplicated"], 0);
  run = relay({"stats", "reset"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "cleared relay:events:stats\n");
  EXPECT_EQ(*redis_->command({"EXISTS", "relay:events:stats"})->integer(), 0);
  run = relay({"stats", "reset"});
  EXPECT_EQ(run.out, "nothing to clear in relay:events:stats\n");
}

// The counters flow control's scripts write (docs/apps.md "Flow control"): their columns appear
// once a handler has one, and --json always has them.
TEST_F(DlqCli, StatsShowsTheFlowControlCounts) {
  ASSERT_TRUE(
      redis_
          ->command({"HSET", "relay:events:stats", "shop/bin/pay.sh:succeeded", "3",
                     "shop/bin/pay.sh:duration_seconds", "4.0", "shop/bin/pay.sh:deferred", "12",
                     "shop/bin/pay.sh:deduplicated", "2", "shop/bin/pay.sh:superseded", "5",
                     "shop/bin/pay.sh:retry_after", "1", "shop/bin/h.sh:failed", "1"})
          .ok());
  BinaryRun run = relay({"stats"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "ready backlog: - (consumer group \"relay\" of stream \"events\" does not exist)\n"
            "APP   HANDLER     SUCCEEDED  FAILED  DLQ  RUNS  TOTAL TIME  AVG TIME  DEFERRED  "
            "DEDUPLICATED  SUPERSEDED  RETRY-AFTER\n"
            "shop  bin/h.sh    0          1       0    1     0.000s      0.000s    0         "
            "0             0           0\n"
            "shop  bin/pay.sh  3          0       0    4     4.000s      1.000s    12        "
            "2             5           1\n");
  run = relay({"stats", "--json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json rows = json::parse(run.out)["handlers"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["handler"], "bin/pay.sh");
  EXPECT_EQ(rows[1]["deferred"], 12);
  EXPECT_EQ(rows[1]["deduplicated"], 2);
  EXPECT_EQ(rows[1]["superseded"], 5);
  EXPECT_EQ(rows[1]["retry_after"], 1);
  EXPECT_EQ(rows[1]["runs"], 4);
}

// Runs stopped by relay cancel (docs/pipeline.md "Cancellation") are runs; their column appears
// once a handler has one, and --json always has it.
TEST_F(DlqCli, StatsShowsTheCancelledRuns) {
  ASSERT_TRUE(redis_
                  ->command({"HSET", "relay:events:stats", "shop/bin/pay.sh:succeeded", "3",
                             "shop/bin/pay.sh:duration_seconds", "5.0", "shop/bin/pay.sh:cancelled",
                             "2", "shop/bin/h.sh:failed", "1"})
                  .ok());
  BinaryRun run = relay({"stats"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "ready backlog: - (consumer group \"relay\" of stream \"events\" does not exist)\n"
            "APP   HANDLER     SUCCEEDED  FAILED  DLQ  RUNS  TOTAL TIME  AVG TIME  CANCELLED\n"
            "shop  bin/h.sh    0          1       0    1     0.000s      0.000s    0\n"
            "shop  bin/pay.sh  3          0       0    5     5.000s      1.000s    2\n");
  run = relay({"stats", "--json"});
  const json rows = json::parse(run.out)["handlers"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["cancelled"], 0);
  EXPECT_EQ(rows[1]["cancelled"], 2);
  EXPECT_EQ(rows[1]["runs"], 5);
}

TEST_F(DlqCli, CommandsFollowREDIS_STREAM) {
  ASSERT_TRUE(redis_->command({"XADD", "relay:orders:dlq", "*", "app", "-", "reason", "x"}).ok());
  const BinaryRun run =
      runRelay({"dlq", "ls", "--json"}, {"REDIS_URI=" + server().uri(), "REDIS_STREAM=orders"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(json::parse(run.out).size(), 1u);
}

}  // namespace
}  // namespace relay::testing
