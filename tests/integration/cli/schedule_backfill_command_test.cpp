// `relay schedule backfill` (docs/schedules.md "Backfill", docs/cli.md): the real binary
// against a real redis-server, and real workers (`relay start`, process runtime) racing it and
// running what it published. Windows are whole minutes of the recent past on the real clock.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_digest.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using nlohmann::json;
using std::chrono::minutes;

class ScheduleBackfillCommand : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    const std::string record = (apps_.path() / "runs").string();
    // Records trigger, message id and stdin of every run, one line each.
    apps_.write("shop/bin/record.sh",
                "#!/bin/sh\necho \"$RELAY_TRIGGER $RELAY_MESSAGE_ID $(cat)\" >> " + record + "\n",
                0755);
    apps_.write("shop/template.yaml",
                "runtime: exec\nschedules:\n  - name: tick\n    cron: \"* * * * *\"\n"
                "    handler: bin/record.sh\n    payload: {k: 1}\n"
                "  - name: nightly\n    cron: \"0 3 * * *\"\n    timezone: Europe/Berlin\n"
                "    handler: bin/record.sh\n");
    base_ = std::chrono::floor<minutes>(SystemClock().now()) - minutes(20);
  }
  std::vector<std::string> env() {
    return {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
            "RELAY_RUNTIME=process", "RELAY_HTTP_ADDR=127.0.0.1:0"};
  }
  BinaryRun relay(std::vector<std::string> args) {
    args.insert(args.begin(), {"schedule", "backfill"});
    return runRelay(args, env());
  }
  /// base + `offset` minutes, as RFC 3339.
  std::string minute(int offset) const { return formatRfc3339(base_ + minutes(offset)); }
  /// scheduled_at of every occurrence entry of the stream, in stream order.
  std::vector<std::string> occurrences() {
    std::vector<std::string> found;
    auto range = redis_->command({"XRANGE", "events", "-", "+"});
    if (!range.ok()) return found;
    auto entries = range->elements();  // kept: a range-for over a temporary's value dangles
    for (const auto& entry : *entries) {
      auto fields = entry.at(1)->elements();
      for (std::size_t i = 0; i + 1 < fields->size(); i += 2) {
        if (*(*fields)[i].string() != "relay_schedule") continue;
        found.push_back(json::parse(*(*fields)[i + 1].string())["scheduled_at"]);
      }
    }
    return found;
  }
  std::vector<json> lines(const std::string& text) {
    std::vector<json> parsed;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) parsed.push_back(json::parse(line));
    return parsed;
  }
  /// `relay start` as `consumer`, logging at debug level (an occurrence another publisher
  /// published first is logged `schedule occurrence already published`, at debug).
  std::unique_ptr<SpawnedProcess> start(const std::string& consumer) {
    std::vector<std::string> environment = env();
    environment.push_back("RELAY_CONSUMER=" + consumer);
    environment.push_back("RELAY_LOG_LEVEL=debug");
    return std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_BINARY, "start"},
                                            environment,
                                            (logs_.path() / (consumer + ".log")).string());
  }
  static bool contains(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
  }

  std::unique_ptr<redis::Connection> redis_;
  TempDir apps_;
  TempDir logs_;
  WallTime base_;
};

TEST_F(ScheduleBackfillCommand, PublishesOnlyTheMissingOnesAndASecondRunNothing) {
  BinaryRun first = relay({"shop", "tick", "--from", minute(2), "--to", minute(2)});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  BinaryRun run =
      relay({"shop", "tick", "--from", minute(0), "--to", minute(4), "--overlap", "all"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, minute(0) + "  published as ")) << run.out;
  EXPECT_TRUE(contains(run.out, minute(2) + "  already published as ")) << run.out;
  EXPECT_TRUE(contains(run.out, "published 4, already published 1, skipped 0")) << run.out;
  EXPECT_EQ(occurrences(),
            (std::vector<std::string>{minute(2), minute(0), minute(1), minute(3), minute(4)}));
  const std::string digest = datasetDigest(*redis_);
  BinaryRun again =
      relay({"shop", "tick", "--from", minute(0), "--to", minute(4), "--overlap", "all"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.out, "published 0, already published 5, skipped 0")) << again.out;
  EXPECT_EQ(datasetDigest(*redis_), digest) << "the second run wrote nothing";
}

TEST_F(ScheduleBackfillCommand, SkipPublishesTheEarliestAndSaysWhyTheRestWait) {
  BinaryRun run = relay({"shop", "tick", "--from", minute(0), "--to", minute(2)});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, minute(0) + "  published as ")) << run.out;
  EXPECT_TRUE(contains(run.out, minute(1) + "  skipped: it would overlap " + minute(0))) << run.out;
  EXPECT_EQ(occurrences(), std::vector<std::string>{minute(0)});
  // Not read by any worker yet: unfinished, nothing more is published.
  BinaryRun waiting = relay({"shop", "tick", "--from", minute(0), "--to", minute(2)});
  ASSERT_EQ(waiting.exit_code, 0) << waiting.err;
  EXPECT_TRUE(contains(waiting.out, minute(1) + "  skipped: the occurrence of " + minute(0)))
      << waiting.out;
  EXPECT_TRUE(contains(waiting.out, "is unfinished (not read yet by group relay)")) << waiting.out;
  EXPECT_EQ(occurrences().size(), 1u);
}

TEST_F(ScheduleBackfillCommand, JsonPrintsOneLinePerOccurrenceAndASummary) {
  relay({"shop", "tick", "--from", minute(1), "--to", minute(1)});
  BinaryRun run =
      relay({"shop", "tick", "--from", minute(0), "--to", minute(2), "--overlap", "all", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<json> parsed = lines(run.out);
  ASSERT_EQ(parsed.size(), 4u) << run.out;
  EXPECT_EQ(parsed[0]["type"], "occurrence");
  EXPECT_EQ(parsed[0]["scheduled_at"], minute(0));
  EXPECT_EQ(parsed[0]["occurrence_id"], "schedule:shop:tick:" + minute(0));
  EXPECT_EQ(parsed[0]["outcome"], "published");
  EXPECT_EQ(parsed[1]["outcome"], "already_published");
  EXPECT_TRUE(parsed[1]["message_id"].is_string());
  EXPECT_EQ(parsed[2]["outcome"], "published");
  EXPECT_EQ(parsed[3]["type"], "summary");
  EXPECT_EQ(parsed[3]["published"], 2);
  EXPECT_EQ(parsed[3]["already_published"], 1);
  EXPECT_EQ(parsed[3]["skipped"], 0);
  EXPECT_EQ(parsed[3]["overlap"], "all");
  // skip: the reason and the occurrence it would overlap.
  BinaryRun skip = relay({"shop", "tick", "--from", minute(5), "--to", minute(6), "--json"});
  const std::vector<json> skipped = lines(skip.out);
  ASSERT_EQ(skipped.size(), 3u) << skip.out;
  EXPECT_EQ(skipped[0]["outcome"], "skipped");
  EXPECT_EQ(skipped[0]["reason"], "unfinished");
  EXPECT_EQ(skipped[0]["overlaps"]["delivered"], false);
}

TEST_F(ScheduleBackfillCommand, ADryRunListsAndPublishesNothing) {
  relay({"shop", "tick", "--from", minute(1), "--to", minute(1)});
  const std::string digest = datasetDigest(*redis_);
  BinaryRun run = relay(
      {"shop", "tick", "--from", minute(0), "--to", minute(2), "--overlap", "all", "--dry-run"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, minute(0) + "  would publish")) << run.out;
  EXPECT_TRUE(contains(run.out, minute(1) + "  already published as ")) << run.out;
  EXPECT_TRUE(contains(run.out, "dry run: would publish 2, already published 1")) << run.out;
  EXPECT_EQ(datasetDigest(*redis_), digest);
}

TEST_F(ScheduleBackfillCommand, RelativeTimesAndTheDefaultEndAreNow) {
  // `--from 3m` and no --to: the last three minutes, up to now (3 or 4 fire times).
  BinaryRun run = relay({"shop", "tick", "--from", "3m", "--overlap", "all", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json summary = lines(run.out).back();
  EXPECT_GE(summary["occurrences"], 3);
  EXPECT_LE(summary["occurrences"], 4);
  EXPECT_EQ(summary["published"], summary["occurrences"]);
}

TEST_F(ScheduleBackfillCommand, MoreThanAHundredNeedYes) {
  // Every minute over three hours: 181 occurrences. stdin is no terminal: refused without --yes.
  const std::string from = formatRfc3339(base_ - std::chrono::hours(3));
  BinaryRun refused =
      relay({"shop", "tick", "--from", from, "--to", minute(0), "--overlap", "all"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.err,
                       "this would publish 181 occurrences of shop/tick (more than "
                       "100): pass --yes to publish them; nothing published"))
      << refused.err;
  EXPECT_TRUE(occurrences().empty());
  BinaryRun yes =
      relay({"shop", "tick", "--from", from, "--to", minute(0), "--overlap", "all", "--yes"});
  ASSERT_EQ(yes.exit_code, 0) << yes.err;
  EXPECT_EQ(occurrences().size(), 181u);
}

TEST_F(ScheduleBackfillCommand, OnATerminalItAsksAndOnlyYesPublishes) {
  // script(1) gives the command a terminal; its stdin (the answer) reaches the prompt.
  const std::string from = formatRfc3339(base_ - std::chrono::hours(3));
  const auto onTerminal = [&](const std::string& answer) {
    std::string command;
    for (const std::string& variable : env()) command += variable + " ";
    command += "script -qec '" + std::string(RELAY_BINARY) +
               " schedule backfill shop tick --from " + from + " --to " + minute(0) +
               " --overlap all' /dev/null < " + (logs_.path() / "answer").string() + " > " +
               (logs_.path() / "out").string() + " 2>&1";
    logs_.write("answer", answer);
    const int status = std::system(command.c_str());
    return std::pair{status, logs_.read("out")};
  };
  const auto [refused_status, refused] = onTerminal("n\n");
  EXPECT_TRUE(contains(refused, "publish 181 occurrences of shop/tick? [y/N]")) << refused;
  EXPECT_TRUE(contains(refused, "not confirmed: nothing published")) << refused;
  EXPECT_NE(refused_status, 0);
  EXPECT_TRUE(occurrences().empty());
  const auto [status, confirmed] = onTerminal("y\n");
  EXPECT_EQ(status, 0) << confirmed;
  EXPECT_TRUE(contains(confirmed, "published 181, already published 0")) << confirmed;
  EXPECT_EQ(occurrences().size(), 181u);
}

TEST_F(ScheduleBackfillCommand, BadInputIsRefusedNamingTheFlag) {
  const std::string digest = datasetDigest(*redis_);
  const std::string future = formatRfc3339(base_ + std::chrono::hours(2));
  const std::string old = formatRfc3339(base_ - std::chrono::hours(48));
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"shop", "tick", "--from", "yesterday"},
       2,
       "--from \"yesterday\" is not a time: expected an RFC 3339 time"},
      {{"shop", "tick", "--from", minute(0), "--to", "2026-13-01T00:00:00Z"},
       2,
       "--to \"2026-13-01T00:00:00Z\" is not a time"},
      {{"shop", "tick", "--from", minute(5), "--to", minute(1)},
       2,
       "--from " + minute(5).substr(0, 19) + ".000Z is after --to " + minute(1).substr(0, 19) +
           ".000Z: expected --from <= --to"},
      {{"shop", "tick", "--from", minute(0), "--to", future}, 2, "is in the future"},
      {{"shop", "tick", "--from", future}, 2, "--from " + future.substr(0, 19)},
      {{"shop", "tick", "--from", "1h", "--to", "9999-12-31T00:00:00Z"},
       2,
       "--to \"9999-12-31T00:00:00Z\" is outside the times Relay handles"},
      {{"shop", "tick", "--from", old}, 2, "an occurrence's record lasts 2d"},
      {{"shop", "tick", "--from", "1h", "--overlap", "buffer"},
       2,
       "--overlap \"buffer\": expected skip or all"},
      {{"shop", "tock", "--from", "1h"},
       1,
       "app shop has no schedule named \"tock\" (schedules: "
       "tick, nightly)"},
      {{"shops", "tick", "--from", "1h"}, 1, "no app named \"shops\""},
      {{"Shop!", "tick", "--from", "1h"}, 2, "\"Shop!\" is not app name"},
      {{"shop", "tick"}, 2, "--from is required"},
  };
  for (const Case& c : cases) {
    BinaryRun run = relay(c.args);
    EXPECT_EQ(run.exit_code, c.exit_code) << c.message << "\n" << run.err;
    EXPECT_TRUE(contains(run.err, c.message)) << c.message << "\n" << run.err;
  }
  EXPECT_EQ(datasetDigest(*redis_), digest) << "nothing written by any refusal";
}

TEST_F(ScheduleBackfillCommand, RacingRealSchedulersEachOccurrenceIsPublishedOnce) {
  // Two workers start (each publishes the current minute's occurrence at once, its catch-up)
  // while backfills of the last minutes up to now run: the current minute is in all of them.
  auto first = start("worker-a");
  auto second = start("worker-b");
  BinaryRun one = relay({"shop", "tick", "--from", "4m", "--overlap", "all"});
  BinaryRun two = relay({"shop", "tick", "--from", "4m", "--overlap", "all"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  ASSERT_TRUE(first->waitForLog("relay started")) << first->log();
  ASSERT_TRUE(second->waitForLog("relay started")) << second->log();
  // Each worker's first round dealt with the current minute of tick: published or found
  // published.
  for (SpawnedProcess* worker : {first.get(), second.get()}) {
    ASSERT_TRUE(SpawnedProcess::waitUntil(
        [&] {
          const std::string log = worker->log();
          return std::regex_search(
              log, std::regex("schedule occurrence (already )?published app=shop schedule=tick"));
        },
        std::chrono::seconds(10)))
        << worker->log();
  }
  const std::vector<std::string> all = occurrences();
  EXPECT_GE(all.size(), 4u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size())
      << "an occurrence published twice";
}

TEST_F(ScheduleBackfillCommand, AWorkerRunsTheBackfilledOccurrences) {
  BinaryRun run =
      relay({"shop", "tick", "--from", minute(0), "--to", minute(2), "--overlap", "all"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto worker = start("worker-a");
  ASSERT_TRUE(worker->waitForLog("relay started")) << worker->log();
  // The payload the scheduler would have written, of each backfilled occurrence.
  const auto payload = [&](int offset) {
    return R"({"source":"relay.schedule","app":"shop","schedule":"tick","scheduled_at":")" +
           minute(offset) + R"(","payload":{"k":1}})";
  };
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        const std::string runs = apps_.read("runs");
        return contains(runs, payload(0)) && contains(runs, payload(1)) &&
               contains(runs, payload(2));
      },
      std::chrono::seconds(30)))
      << apps_.read("runs") << worker->log();
  const std::string runs = apps_.read("runs");
  std::istringstream in(runs);
  for (std::string line; std::getline(in, line);) {
    EXPECT_EQ(line.rfind("schedule ", 0), 0u) << line;
  }
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        return *redis_->command({"XPENDING", "events", "relay"})->at(0)->integer() == 0;
      },
      std::chrono::seconds(10)))
      << "every occurrence acknowledged";
}

}  // namespace
}  // namespace relay::testing
