// Replays end to end (docs/replay.md): real worker processes (relay_test_worker) drive replays
// created by the in-process CLI through a real redis-server; the handlers record every run, so
// a test counts runs per original entry.
#include <signal.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/dlq_bulk_replay.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "history/replay_record.h"
#include "http/client.h"
#include "integration/faults/fault_fixture.h"
#include "stream/stream_id.h"
#include "support/cli_run.h"
#include "support/prometheus_text.h"
#include "support/worker_log.h"

namespace relay::testing {
namespace {

using cli::testing::ScopedEnv;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One line per run: trigger, replay id (- for none), the original entry, the message, attempt.
// Fails when the event holds "fail" (unless the app's `healed` file exists); sleeps while the
// app's `slow` file exists.
constexpr const char* kHandler =
    "#!/bin/sh\nev=$(cat)\n"
    "echo \"$RELAY_TRIGGER ${RELAY_REPLAY_ID:--} ${RELAY_ORIGINAL_MESSAGE_ID:-$RELAY_MESSAGE_ID} "
    "$RELAY_MESSAGE_ID $RELAY_ATTEMPT\" >> runs\n"
    "while [ -e slow ]; do sleep 0.1; done\n"
    "case \"$ev\" in *fail*) [ -e healed ] || exit 3;; esac\nexit 0\n";

struct HandlerRecord {
  std::string trigger, replay, original, message;
  int attempt = 0;
};

class Replay : public FaultTest {
 protected:
  std::vector<HandlerRecord> runs(const std::string& app) {
    std::ifstream in(appsRoot("v1").path() / app / "runs");
    std::vector<HandlerRecord> out;
    HandlerRecord run;
    while (in >> run.trigger >> run.replay >> run.original >> run.message >> run.attempt) {
      out.push_back(run);
    }
    return out;
  }
  std::vector<HandlerRecord> replayRuns(const std::string& app) {
    std::vector<HandlerRecord> out;
    for (const HandlerRecord& run : runs(app)) {
      if (run.trigger == "replay") out.push_back(run);
    }
    return out;
  }
  /// `relay ...` in process against this server and the v1 apps.
  cli::testing::CliRun relay(std::vector<std::string> args) {
    ScopedEnv uri("REDIS_URI", server_->uri());
    ScopedEnv apps("RELAY_APPS", appsRoot("v1").path().string());
    ScopedEnv runtime("RELAY_RUNTIME", "process");
    return cli::testing::run(std::move(args));
  }
  std::optional<history::ReplayStatus> status(const std::string& id) {
    auto read = history::readReplay(*redis_, keys_, id);
    return read.ok() ? *read : std::nullopt;
  }
  /// The pending messages with their owners, deliveries and state, for a failure's message.
  std::string pendingReport() {
    std::string out;
    auto reply = redis_->command({"XPENDING", "events", "relay", "-", "+", "100"});
    for (std::size_t i = 0; reply.ok() && i < reply->size(); ++i) {
      auto row = reply->at(i);
      const std::string id(*row->at(0)->string());
      out += id + " " + std::string(*row->at(1)->string()) + " idle " +
             std::to_string(*row->at(2)->integer()) + " deliveries " +
             std::to_string(*row->at(3)->integer()) + ":";
      auto state = redis_->command({"HGETALL", keys_.state(id)});
      for (std::size_t j = 0; state.ok() && j < state->size(); ++j) {
        out += " " + std::string(*state->at(j)->string());
      }
      out += "\n";
    }
    return out;
  }
  static std::string lastLine(const std::string& text) {
    std::string trimmed = text;
    while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
    return trimmed.substr(trimmed.rfind('\n') == std::string::npos ? 0 : trimmed.rfind('\n') + 1);
  }
  static std::string nowText(long long offset_s = 0) {
    return formatRfc3339(WallTime(std::chrono::seconds(std::time(nullptr) + offset_s)));
  }
  void writeAudit(const std::string& extra = "") {
    writeApp("v1", "audit",
             "runtime: exec\nevents:\n  - handler: bin/h.sh\n"
             "    pattern: {kind: [a], at: [{gt: \"now()-3s\"}]}\n    retries: 1\n" +
                 extra,
             {{"bin/h.sh", kHandler}});
  }
  std::string audit(const std::string& file) { return (appsRoot("v1").path() / "audit" / file); }
  /// One sample of `worker`'s /metrics; -1 when it cannot be read.
  static double metric(const SpawnedProcess& worker, const std::string& name,
                       PrometheusText::Labels labels = {}) {
    SystemClock clock;
    auto response =
        http::get(httpAddressInLog(worker.log()), "/metrics", std::chrono::seconds(2), clock);
    if (!response.ok() || response->status != 200) return -1;
    return PrometheusText(response->body).value(name, std::move(labels)).value_or(-1);
  }
};

// The window's entries run again through the rules as they were judged at publication: a
// `now()-3s` rule that matches nothing now matches the copies of what it matched then, in
// stream order; they have their own state, retries and a dead-letter entry marked as a replay.
TEST_F(Replay, RunsTheWindowInStreamOrderClassifiedAtPublicationWithItsOwnRetriesAndDlq) {
  writeAudit();
  auto one = worker("v1", "one", {"MAX_CONCURRENCY=1", "RELAY_TEST_BACKOFF=100ms"});
  std::vector<std::string> matched;
  for (int i = 0; i < 5; ++i) {
    const std::string fail = i == 2 ? ",\"fail\":true" : "";
    matched.push_back(
        xadd(R"({"kind":"a","at":")" + nowText() + R"(","n":)" + std::to_string(i) + fail + "}"));
  }
  xadd(R"({"kind":"a","at":")" + nowText(-3600) + R"(","n":99})");  // too old then as now
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && runs("audit").size() == 6; })) << one->log();
  ASSERT_EQ(dlq().size(), 1u);
  std::this_thread::sleep_for(seconds(4));  // the rule matches none of them now

  const auto created = relay({"replay", "--app", "audit", "--since", "1h", "--json"});
  ASSERT_EQ(created.exit_code, 0) << created.err << created.out << one->log();
  const auto done = nlohmann::json::parse(lastLine(created.out));
  EXPECT_EQ(done["state"], "done");
  EXPECT_EQ(done["published"], 5);
  EXPECT_EQ(done["skipped"], 1);
  const std::string id = done["id"];
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && replayRuns("audit").size() == 6; }))
      << one->log();

  std::vector<std::string> firsts;
  for (const HandlerRecord& run : replayRuns("audit")) {
    EXPECT_EQ(run.replay, id);
    EXPECT_NE(run.message, run.original);  // a new message: its own state
    if (run.attempt == 1) firsts.push_back(run.original);
  }
  EXPECT_EQ(firsts, matched);  // every matched entry, in stream order, once
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].at("replay"), id);
  EXPECT_EQ(entries[1].at("replay_of"), matched[2]);
  EXPECT_NE(entries[1].at("original_id"), matched[2]);
  EXPECT_EQ(entries[1].at("handler_attempts"), "2");  // its own retries
  EXPECT_EQ(metric(*one, "relay_replay_copies_total"), 5);
  // Counted as the live events were (a retry is classified again, live or copy).
  EXPECT_EQ(metric(*one, "relay_events_total", {{"outcome", "replay"}}),
            metric(*one, "relay_events_total", {{"outcome", "matched"}}));
  EXPECT_NE(one->log().find("replay=" + id), std::string::npos) << one->log();
}

// Copies wait for a paused app like live events, and run at the resume.
TEST_F(Replay, CopiesWaitForAPausedAppAndRunAtTheResume) {
  writeApp("v1", "audit",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [a]}\n"
           "",
           {{"bin/h.sh", kHandler}});
  auto one = worker("v1", "one");
  for (int i = 0; i < 4; ++i) xadd(R"({"kind":"a","n":)" + std::to_string(i) + "}");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && runs("audit").size() == 4; }));
  ASSERT_EQ(relay({"app", "pause", "audit"}).exit_code, 0);
  const auto created = relay({"replay", "--app", "audit", "--since", "1h", "--json"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  std::this_thread::sleep_for(seconds(2));
  EXPECT_TRUE(replayRuns("audit").empty()) << one->log();
  EXPECT_EQ(pending(), 4);
  ASSERT_EQ(relay({"app", "resume", "audit"}).exit_code, 0);
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && replayRuns("audit").size() == 4; }))
      << one->log();
}

// kill -9 of the driving worker mid-replay: another worker takes the lease when it runs out
// and resumes from the cursor; every entry is published as one copy, and runs at least once
// and at most twice (a copy the killed worker was running).
TEST_F(Replay, AnotherWorkerResumesAKilledDriverAndPublishesEachCopyOnce) {
  // A 2 s timeout: a copy the killed worker was running is taken over 2 s (+ the kill grace)
  // later, not after the default 30 s.
  writeApp("v1", "audit",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [a]}\n"
           "    timeout: 2s\n",
           {{"bin/h.sh", kHandler}});
  std::map<std::string, std::unique_ptr<SpawnedProcess>> workers;
  // A copy the killed worker was running is retried (attempt 2) after 100 ms, not 1 minute.
  workers["one"] = worker("v1", "one", {"RELAY_TEST_REPLAY_PAGE=5", "RELAY_TEST_BACKOFF=100ms"});
  workers["two"] = worker("v1", "two", {"RELAY_TEST_REPLAY_PAGE=5", "RELAY_TEST_BACKOFF=100ms"});
  std::vector<std::string> ids;
  for (int i = 0; i < 60; ++i) ids.push_back(xadd(R"({"kind":"a","n":)" + std::to_string(i) + "}"));
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && runs("audit").size() == 60; }));
  const auto created =
      relay({"replay", "--app", "audit", "--since", "1h", "--rate", "20/s", "--detach"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string id = lastLine(created.out);
  ASSERT_TRUE(waitUntil([&] {
    auto now = status(id);
    return now && now->published >= 15 && !now->driver.empty();
  }));
  const std::string killed = status(id)->driver;
  workers[killed]->signal(SIGKILL);
  ASSERT_TRUE(waitUntil([&] { return status(id) && status(id)->state == "done"; }, seconds(40)));
  EXPECT_NE(status(id)->driver, killed);
  EXPECT_EQ(status(id)->published, 60);
  EXPECT_EQ(*redis_->command({"HLEN", keys_.replayCopies(id)})->integer(), 60);
  const std::string survivor = killed == "one" ? "two" : "one";
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(40)))
      << pendingReport() << workers[survivor]->log();
  std::map<std::string, int> per_original;
  for (const HandlerRecord& run : replayRuns("audit")) ++per_original[run.original];
  ASSERT_EQ(per_original.size(), 60u);
  for (const std::string& original : ids) {
    EXPECT_GE(per_original[original], 1) << original;
    EXPECT_LE(per_original[original], 2) << original;
  }
}

// A replay racing live traffic on the same entries: every live invocation runs once, every
// copy once (no kill: nothing is repeated).
TEST_F(Replay, ARaceWithLiveTrafficNeverRunsALiveInvocationTwice) {
  writeApp("v1", "audit",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [a]}\n",
           {{"bin/h.sh", kHandler}});
  auto one = worker("v1", "one");
  auto two = worker("v1", "two");
  std::vector<std::string> live;
  for (int i = 0; i < 30; ++i)
    live.push_back(xadd(R"({"kind":"a","n":)" + std::to_string(i) + "}"));
  // Paced, so that its copies are published while the live events below arrive and run.
  const auto created =
      relay({"replay", "--app", "audit", "--since", "1h", "--rate", "20/s", "--detach"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string id = lastLine(created.out);
  for (int i = 30; i < 60; ++i, std::this_thread::sleep_for(milliseconds(40)))
    live.push_back(xadd(R"({"kind":"a","n":)" + std::to_string(i) + "}"));
  ASSERT_TRUE(waitUntil([&] { return status(id) && status(id)->state == "done"; }));
  const long long copies = status(id)->published;
  EXPECT_EQ(copies, 30);  // the window ended when the replay was created
  ASSERT_TRUE(waitUntil([&] {
    return pending() == 0 && static_cast<long long>(runs("audit").size()) == 60 + copies;
  })) << one->log()
      << two->log();
  std::map<std::string, int> live_runs, copy_runs;
  for (const HandlerRecord& run : runs("audit")) {
    ++(run.trigger == "replay" ? copy_runs : live_runs)[run.original];
  }
  ASSERT_EQ(live_runs.size(), 60u);
  for (const auto& [original, count] : live_runs) EXPECT_EQ(count, 1) << original;
  for (const auto& [original, count] : copy_runs) EXPECT_EQ(count, 1) << original;
}

// --again, entries the stream lost, --rate and cancel.
TEST_F(Replay, AgainMissingEntriesRateAndCancel) {
  writeApp("v1", "audit",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [a]}\n",
           {{"bin/h.sh", kHandler}});
  auto one = worker("v1", "one");
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(xadd(R"({"kind":"a","n":)" + std::to_string(i) + "}"));
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && runs("audit").size() == 20; }));
  // The first 5 are trimmed away: reported missing, with what removed them.
  ASSERT_TRUE(redis_->command({"XTRIM", "events", "MINID", ids[5]}).ok());
  const auto first = relay(
      {"replay", "--app", "audit", "--from", ids[0], "--to", ids[19], "--rate", "10/s", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err << one->log();
  const auto done = nlohmann::json::parse(lastLine(first.out));
  EXPECT_EQ(done["published"], 15);
  EXPECT_EQ(done["missing"]["from"], ids[0]);
  // Up to just before the first entry still held: ids[4] itself or the last id before ids[5].
  const auto missing_to = stream::StreamId::parse(std::string(done["missing"]["to"]));
  ASSERT_TRUE(missing_to);
  EXPECT_LE(*stream::StreamId::parse(ids[4]), *missing_to);
  EXPECT_LT(*missing_to, *stream::StreamId::parse(ids[5]));
  EXPECT_NE(std::string(done["missing"]["reason"]).find("XTRIM"), std::string::npos);
  // --rate 10/s: 15 copies take at least 1 s of Redis time between the first and the last.
  auto copies = redis_->command({"HVALS", keys_.replayCopies(std::string(done["id"]))});
  std::vector<std::string> copy_ids;
  for (std::size_t i = 0; i < copies->size(); ++i) copy_ids.emplace_back(*copies->at(i)->string());
  std::sort(copy_ids.begin(), copy_ids.end());
  EXPECT_GE(std::stoll(copy_ids.back()) - std::stoll(copy_ids.front()), 1000);

  const auto again = relay({"replay", "--app", "audit", "--from", ids[10], "--to", ids[12]});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find(std::string(done["id"])), std::string::npos) << again.err;

  // Cancel: the copies stop being published; the running one is stopped, the rest cancelled.
  std::ofstream(audit("slow")).put('\n');
  const auto slow = relay({"replay", "--app", "audit", "--from", ids[5], "--to", ids[19], "--again",
                           "--rate", "2/s", "--detach"});
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  const std::string id = lastLine(slow.out);
  ASSERT_TRUE(waitUntil([&] {
    for (const HandlerRecord& run : replayRuns("audit")) {
      if (run.replay == id) return true;
    }
    return false;
  })) << one->log();
  const auto cancelled = relay({"replay", "cancel", id, "--json"});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  const auto result = nlohmann::json::parse(cancelled.out);
  EXPECT_TRUE(result["stopped"]);
  EXPECT_GE(result["cancelled"], 1);
  EXPECT_EQ(status(id)->state, "cancelled");
  const long long published = status(id)->published;
  EXPECT_LT(published, 15);
  std::filesystem::remove(audit("slow"));
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; })) << one->log();
  std::this_thread::sleep_for(milliseconds(1'500));
  EXPECT_EQ(status(id)->published, published);  // nothing published after the cancel
  // Of its copies, only those running at the cancel ran: the others were cancelled before. A
  // copy running at the cancel may be stopped before its handler wrote its record: at most.
  long long second = 0;
  for (const HandlerRecord& run : replayRuns("audit")) second += run.replay == id;
  EXPECT_GE(second, 1);
  EXPECT_LE(second, result["running"].get<long long>());
  const auto shown = relay({"replay", "ls"});
  EXPECT_NE(shown.out.find(id), std::string::npos);
  EXPECT_NE(shown.out.find("cancelled"), std::string::npos);
}

// A window older than the stream's retention: the trimmed part is reported missing with the
// retention that removed it, and the rest is replayed.
TEST_F(Replay, AWindowOlderThanTheRetentionNamesTheRetentionThatRemovedIt) {
  writeApp("v1", "audit",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [a]}\n",
           {{"bin/h.sh", kHandler}});
  auto one = worker("v1", "one", {"REDIS_STREAM_RETENTION=1h"});
  for (const char* id : {"1000-0", "1000-1", "2000-0"}) {
    ASSERT_TRUE(redis_->command({"XADD", "events", id, "event", R"({"kind":"a"})"}).ok());
  }
  const std::string kept = xadd(R"({"kind":"a","n":1})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && runs("audit").size() == 4; }));
  // Trimmed as the worker's retention would (the housekeeper's own turn may come first).
  ASSERT_TRUE(redis_->command({"XTRIM", "events", "MINID", kept}).ok());
  const auto replayed =
      relay({"replay", "--app", "audit", "--from", "1000", "--to", kept, "--json"});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err << one->log();
  const auto done = nlohmann::json::parse(lastLine(replayed.out));
  EXPECT_EQ(done["published"], 1);
  EXPECT_EQ(done["missing"]["from"], "1000-0");
  // Up to just before the first entry the stream still holds.
  const std::string to = done["missing"]["to"];
  EXPECT_LT(std::stoll(to), std::stoll(kept) + (kept.substr(kept.find('-')) == "-0" ? 0 : 1))
      << done.dump();
  EXPECT_NE(std::string(done["missing"]["reason"]).find("REDIS_STREAM_RETENTION=1h"),
            std::string::npos)
      << done.dump();
}

// docs/replay.md "Archive": a window the stream no longer holds is read from the app's archive
// (written by the worker, original ids kept): every entry runs again as a replay copy, in
// order, and nothing is reported missing.
TEST_F(Replay, AWindowTheStreamTrimmedIsReplayedFromTheAppsArchive) {
  writeApp("v1", "audit",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [a]}\n"
           "archive: {retention: 7d}\n",
           {{"bin/h.sh", kHandler}});
  auto one = worker("v1", "one");
  std::vector<std::string> ids;
  for (int n = 1; n <= 4; ++n) ids.push_back(xadd(R"({"kind":"a","n":)" + std::to_string(n) + "}"));
  xadd(R"({"kind":"other"})");  // not the app's: not archived
  const auto archived = [&] {
    auto reply = redis_->command({"XLEN", "relay:events:archive:relay:audit"});
    return reply.ok() ? *reply->integer() : -1;
  };
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && archived() == 4; })) << one->log();
  const std::string kept = xadd(R"({"kind":"b"})");
  ASSERT_TRUE(redis_->command({"XTRIM", "events", "MINID", kept}).ok());
  const auto replayed =
      relay({"replay", "--app", "audit", "--from", ids.front(), "--to", ids.back(), "--json"});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err << one->log();
  const auto done = nlohmann::json::parse(lastLine(replayed.out));
  EXPECT_EQ(done["published"], 4) << done.dump();
  EXPECT_TRUE(!done.contains("missing") || done["missing"].is_null()) << done.dump();
  ASSERT_TRUE(waitUntil([&] { return replayRuns("audit").size() == 4 && pending() == 0; }))
      << one->log();
  // Each once, and the copies (run concurrently, as live events are) published in stream order.
  std::vector<HandlerRecord> copies = replayRuns("audit");
  std::sort(copies.begin(), copies.end(), [](const HandlerRecord& a, const HandlerRecord& b) {
    return *stream::StreamId::parse(a.message) < *stream::StreamId::parse(b.message);
  });
  std::vector<std::string> originals;
  for (const HandlerRecord& run : copies) originals.push_back(run.original);
  EXPECT_EQ(originals, ids);
}

// Bulk DLQ replay: the count is stated, a "no" changes nothing, a "yes" replays the selected
// entries (and only those) through their recorded handlers.
TEST_F(Replay, BulkDeadLetterReplayStatesTheCountAndAsksFirst) {
  for (const char* app : {"audit", "other"}) {
    writeApp("v1", app,
             "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {app: [" +
                 std::string(app) + "]}\n    retries: 0\n",
             {{"bin/h.sh", kHandler}});
  }
  auto one = worker("v1", "one");
  for (int i = 0; i < 3; ++i) xadd(R"({"app":"audit","fail":)" + std::to_string(i) + "}");
  xadd(R"({"app":"other","fail":1})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && dlq().size() == 4; }));
  ScopedEnv uri("REDIS_URI", server_->uri());
  ScopedEnv apps("RELAY_APPS", appsRoot("v1").path().string());
  std::ostringstream out, err;
  cli::CommandContext no{out, err};
  cli::DlqBulkFlags flags;
  flags.app = "audit";
  flags.since = "1h";
  flags.json = true;
  std::istringstream refuse("n\n");
  cli::runDlqBulkReplay(flags, refuse, no);
  EXPECT_EQ(no.exit_code, 1);
  EXPECT_NE(err.str().find("selects 3 dead-letter entries"), std::string::npos) << err.str();
  EXPECT_EQ(dlq().size(), 4u);

  std::ofstream(audit("healed")).put('\n');
  std::ostringstream out2, err2;
  cli::CommandContext yes{out2, err2};
  std::istringstream accept("y\n");
  cli::runDlqBulkReplay(flags, accept, yes);
  ASSERT_EQ(yes.exit_code, 0) << err2.str() << one->log();
  ASSERT_TRUE(waitUntil([&] { return pending() == 0 && replayRuns("audit").size() == 3; }));
  const auto left = dlq();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].at("app"), "other");
  EXPECT_TRUE(replayRuns("other").empty());
}

}  // namespace
}  // namespace relay::testing
