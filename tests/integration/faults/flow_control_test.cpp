// Flow control end to end (docs/apps.md "Flow control", docs/pipeline.md "Flow control"): real
// worker processes sharing one stream through a real redis-server, each gate enforced across
// them, and a worker killed with kill -9 while invocations wait.
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "integration/faults/fault_fixture.h"

namespace relay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Appends "b <ns> <event>" when it starts and "e <ns> <event>" when it ends to the app's `runs`
// file, sleeping 0.3 s between (longer while the app's `slow` file exists).
constexpr const char* kRecordingHandler =
    "#!/bin/sh\nev=$(cat)\necho \"b $(date +%s%N) $ev\" >> runs\n"
    "echo \"started $RELAY_MESSAGE_ID attempt $RELAY_ATTEMPT\"\nsleep 0.3\n"
    "while [ -e slow ]; do sleep 0.1; done\necho \"e $(date +%s%N) $ev\" >> runs\n";

struct HandlerRun {
  std::string event;
  long long begin_ns = 0;
  long long end_ns = 0;  // 0 while it runs
};

class FlowControl : public FaultTest {
 protected:
  /// The app's recorded runs, in start order.
  std::vector<HandlerRun> runs(const std::string& root, const std::string& app) {
    std::ifstream in(appsRoot(root).path() / app / "runs");
    std::vector<HandlerRun> out;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string kind, event;
      long long ns = 0;
      words >> kind >> ns;
      std::getline(words >> std::ws, event);
      if (kind == "b") {
        out.push_back({event, ns, 0});
        continue;
      }
      for (auto run = out.rbegin(); run != out.rend(); ++run) {
        if (run->event == event && run->end_ns == 0) {
          run->end_ns = ns;
          break;
        }
      }
    }
    return out;
  }
  long long stat(const std::string& field, const std::string& counter) {
    auto reply = redis_->command({"HGET", keys_.stats(), field + ":" + counter});
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::stoll(std::string(**text)) : 0;
  }
  std::string runtimeFile(const std::string& root, const std::string& path) {
    std::ifstream in(appsRoot(root).path() / path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  /// The most finished runs of events containing `needle` whose [begin, end) overlap at one
  /// moment (a run whose worker was killed never ends).
  static int mostAtOnce(const std::vector<HandlerRun>& all, const std::string& needle) {
    std::vector<std::pair<long long, int>> edges;
    for (const HandlerRun& run : all) {
      if (run.event.find(needle) == std::string::npos || run.end_ns == 0) continue;
      edges.emplace_back(run.begin_ns, 1);
      edges.emplace_back(run.end_ns, -1);
    }
    std::sort(edges.begin(), edges.end());  // an end (-1) sorts before a begin at one instant
    int now = 0, most = 0;
    for (const auto& [at, delta] : edges) most = std::max(most, now += delta);
    return most;
  }
};

// Per-key concurrency across two workers: at most 2 of tenant a run at once whichever worker
// runs them, tenant b's one event starts while a's backlog waits (it is not queued behind it),
// every event runs exactly once, and the deferrals are counted.
TEST_F(FlowControl, AKeyLimitHoldsAcrossWorkersAndAnotherKeyIsNotQueuedBehindIt) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
           "    concurrency: {limit: 2, key: tenant}\n",
           {{"bin/h.sh", kRecordingHandler}});
  auto one = worker("v1", "one");
  auto two = worker("v1", "two");
  for (int i = 0; i < 8; ++i) xadd(R"({"kind":"job","tenant":"a","n":)" + std::to_string(i) + "}");
  const std::string b = xadd(R"({"kind":"job","tenant":"b","n":100})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(40))) << one->log() << two->log();
  const std::vector<HandlerRun> all = runs("v1", "shop");
  ASSERT_EQ(all.size(), 9u) << one->log() << two->log();
  EXPECT_EQ(mostAtOnce(all, R"("tenant":"a")"), 2);
  // b started before the fourth of a's 8 runs (a's 8 take 4 rounds of 0.3 s at 2 at a time).
  std::vector<long long> a_starts;
  long long b_start = 0;
  for (const HandlerRun& run : all) {
    if (run.event.find(R"("tenant":"b")") != std::string::npos)
      b_start = run.begin_ns;
    else
      a_starts.push_back(run.begin_ns);
  }
  std::sort(a_starts.begin(), a_starts.end());
  EXPECT_LT(b_start, a_starts[3]);
  EXPECT_GE(stat("shop/bin/h.sh", "deferred"), 6);
  EXPECT_EQ(stat("shop/bin/h.sh", "succeeded"), 9);
  EXPECT_TRUE(dlq().empty());
  EXPECT_EQ(field(b, "relay:wait:shop/bin/h.sh"), "<nil>");  // no trace left once done
}

// A throttled backlog holds no thread and no message in hand: with one thread per worker, an
// unthrottled app's events run while a throttle of 4 per second (no burst: one turn per 250 ms)
// works through 12 events.
TEST_F(FlowControl, AThrottleSpacesStartsAcrossWorkersAndHoldsNoThreadWhileItWaits) {
  writeApp("v1", "slowapi",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [call]}\n"
           "    throttle: {limit: 4, period: 1s}\n",
           {{"bin/h.sh", kRecordingHandler}});
  writeApp("v1", "free",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [free]}\n",
           {{"bin/h.sh", kRecordingHandler}});
  auto one = worker("v1", "one", {"MAX_CONCURRENCY=1"});
  auto two = worker("v1", "two", {"MAX_CONCURRENCY=1"});
  for (int i = 0; i < 12; ++i) xadd(R"({"kind":"call","n":)" + std::to_string(i) + "}");
  for (int i = 0; i < 3; ++i) xadd(R"({"kind":"free","n":)" + std::to_string(i) + "}");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(40))) << one->log() << two->log();
  const std::vector<HandlerRun> calls = runs("v1", "slowapi");
  const std::vector<HandlerRun> free = runs("v1", "free");
  ASSERT_EQ(calls.size(), 12u);
  ASSERT_EQ(free.size(), 3u);
  std::vector<long long> starts;
  for (const HandlerRun& run : calls) starts.push_back(run.begin_ns);
  std::sort(starts.begin(), starts.end());
  // 11 intervals of 250 ms at the least (a throttle that did not throttle takes ~1 s here).
  EXPECT_GE(starts.back() - starts.front(), 2'500'000'000LL);
  // The free app's last event ran long before the throttled backlog was through.
  long long free_end = 0;
  for (const HandlerRun& run : free) free_end = std::max(free_end, run.end_ns);
  EXPECT_LT(free_end, starts.back());
  EXPECT_EQ(stat("slowapi/bin/h.sh", "succeeded"), 12);
  EXPECT_GE(stat("slowapi/bin/h.sh", "deferred"), 8);
}

// The same event sent twice by a producer (not a redelivery) runs once: the second is
// acknowledged as deduplicated and counted; another key runs, and so do events without one.
TEST_F(FlowControl, ADuplicateEventIsAcknowledgedAsDeduplicatedAndCounted) {
  writeApp("v1", "orders",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [order]}\n"
           "    dedupe: {key: order_id, ttl: 1h}\n",
           {{"bin/h.sh", kRecordingHandler}});
  auto one = worker("v1", "one");
  auto two = worker("v1", "two");
  const std::string first = xadd(R"({"kind":"order","order_id":7})");
  const std::string again = xadd(R"({"kind":"order","order_id":7})");
  xadd(R"({"kind":"order","order_id":8})");
  // Without the key there is nothing to be a duplicate of: both run.
  xadd(R"({"kind":"order","note":"no id"})");
  xadd(R"({"kind":"order","note":"no id"})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << one->log() << two->log();
  const std::vector<HandlerRun> all = runs("v1", "orders");
  ASSERT_EQ(all.size(), 4u) << one->log() << two->log();
  EXPECT_EQ(stat("orders/bin/h.sh", "deduplicated"), 1);
  EXPECT_EQ(stat("orders/bin/h.sh", "succeeded"), 4);
  // Whichever of the two a worker recorded first runs; the other names it.
  const std::string markers[] = {field(first, "orders/bin/h.sh"), field(again, "orders/bin/h.sh")};
  const bool second_deduplicated = markers[1] == "deduplicated:0:" + first;
  EXPECT_TRUE(second_deduplicated || markers[0] == "deduplicated:0:" + again)
      << markers[0] << " " << markers[1];
  EXPECT_NE((one->log() + two->log()).find("duplicate event, invocation not run"),
            std::string::npos);
  EXPECT_TRUE(dlq().empty());
}

// A burst of one user's events runs once, with the latest, after the quiet period; the earlier
// ones are acknowledged as superseded and counted, never run.
TEST_F(FlowControl, ADebouncedBurstRunsOnceWithItsLatestEvent) {
  writeApp("v1", "profile",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [edit]}\n"
           "    debounce: {key: user, period: 500ms, max_wait: 10s}\n",
           {{"bin/h.sh", kRecordingHandler}});
  auto one = worker("v1", "one");
  auto two = worker("v1", "two");
  for (int i = 1; i <= 5; ++i) xadd(R"({"kind":"edit","user":"u1","n":)" + std::to_string(i) + "}");
  xadd(R"({"kind":"edit","user":"u2","n":9})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << one->log() << two->log();
  const std::vector<HandlerRun> all = runs("v1", "profile");
  ASSERT_EQ(all.size(), 2u) << one->log() << two->log();
  int u1_runs = 0;
  for (const HandlerRun& run : all) {
    if (run.event.find(R"("user":"u1")") == std::string::npos) continue;
    ++u1_runs;
    EXPECT_NE(run.event.find(R"("n":5)"), std::string::npos) << run.event;
  }
  EXPECT_EQ(u1_runs, 1);
  EXPECT_EQ(stat("profile/bin/h.sh", "superseded"), 4);
  EXPECT_TRUE(dlq().empty());
}

// A singleton never runs two of one key at once, and a newer event replaces a waiting one: of
// three events sent while the first runs, the first and the last run, the middle is superseded.
TEST_F(FlowControl, ASingletonRunsOneAtATimeAndANewerEventReplacesTheWaitingOne) {
  writeApp("v1", "sync",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [sync]}\n"
           "    singleton: {key: account}\n",
           {{"bin/h.sh", kRecordingHandler}});
  appsRoot("v1").write("sync/slow", "");
  auto one = worker("v1", "one");
  auto two = worker("v1", "two");
  xadd(R"({"kind":"sync","account":1,"n":1})");
  ASSERT_TRUE(waitUntil([&] { return runs("v1", "sync").size() == 1; }));
  xadd(R"({"kind":"sync","account":1,"n":2})");
  ASSERT_TRUE(waitUntil([&] { return stat("sync/bin/h.sh", "deferred") >= 1; }));
  xadd(R"({"kind":"sync","account":1,"n":3})");
  ASSERT_TRUE(waitUntil([&] { return stat("sync/bin/h.sh", "superseded") == 1; }))
      << one->log() << two->log();
  std::filesystem::remove(appsRoot("v1").path() / "sync/slow");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << one->log() << two->log();
  const std::vector<HandlerRun> all = runs("v1", "sync");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_NE(all[0].event.find(R"("n":1)"), std::string::npos);
  EXPECT_NE(all[1].event.find(R"("n":3)"), std::string::npos);
  EXPECT_EQ(mostAtOnce(all, "sync"), 1);
  EXPECT_TRUE(dlq().empty());
}

// A handler that exits 75 after printing `retry-after: 1s` runs again a second later, and that
// first run costs no attempt: with `retries: 0` the invocation still succeeds on its second run.
TEST_F(FlowControl, ARetryAfterFromTheHandlerReschedulesWithoutChargingAnAttempt) {
  writeApp("v1", "mail",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [mail]}\n"
           "    retries: 0\n",
           {{"bin/h.sh",
             "#!/bin/sh\ncat >/dev/null\necho \"run $(date +%s%N) $RELAY_ATTEMPT\" >> runs\n"
             "if [ ! -e told ]; then touch told; echo 'retry-after: 1s'; exit 75; fi\n"}});
  auto one = worker("v1", "one");
  xadd(R"({"kind":"mail"})");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << one->log();
  std::istringstream lines(runtimeFile("v1", "mail/runs"));
  std::string word;
  std::vector<long long> at;
  std::vector<std::string> attempts;
  while (lines >> word) {
    long long ns = 0;
    std::string attempt;
    lines >> ns >> attempt;
    at.push_back(ns);
    attempts.push_back(attempt);
  }
  ASSERT_EQ(at.size(), 2u) << one->log();
  EXPECT_EQ(attempts[0], "1");
  EXPECT_EQ(attempts[1], "1");  // the first run was not charged
  EXPECT_GE(at[1] - at[0], 900'000'000LL);
  EXPECT_EQ(stat("mail/bin/h.sh", "retry_after"), 1);
  EXPECT_EQ(stat("mail/bin/h.sh", "succeeded"), 1);
  EXPECT_TRUE(dlq().empty());
}

// kill -9 while one of a key's invocations runs and two wait for its slot: the next worker
// runs all three, the two that waited once each, uncharged; the key's slot of the dead worker
// is freed with its claim; nothing is lost, nothing is left pending.
TEST_F(FlowControl, AKillWhileInvocationsWaitForTheirKeyLosesNothingAndChargesOnlyTheStarted) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [job]}\n"
           "    timeout: 3s\n    retries: 1\n    concurrency: {limit: 1, key: tenant}\n",
           {{"bin/h.sh", kRecordingHandler}});
  appsRoot("v1").write("shop/slow", "");
  auto first = worker("v1", "first");
  for (int i = 1; i <= 3; ++i) xadd(R"({"kind":"job","tenant":"a","n":)" + std::to_string(i) + "}");
  ASSERT_TRUE(first->waitForLog("] started ")) << first->log();  // the handler's own line
  ASSERT_TRUE(waitUntil([&] { return stat("shop/bin/h.sh", "deferred") >= 2; })) << first->log();
  // The waiting ones are parked, not in the worker's hand.
  EXPECT_EQ(pendingByConsumer()["first"], 1);
  first->signal(SIGKILL);
  first->wait();
  std::filesystem::remove(appsRoot("v1").path() / "shop/slow");
  auto second = worker("v1", "second", {"RELAY_TEST_BACKOFF=200ms"});
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(40))) << second->log();
  const std::vector<HandlerRun> all = runs("v1", "shop");
  // n=1 twice (its worker died), n=2 and n=3 once.
  ASSERT_EQ(all.size(), 4u) << runtimeFile("v1", "shop/runs") << first->log() << second->log();
  EXPECT_EQ(mostAtOnce(all, "tenant"), 1);
  EXPECT_EQ(count(second->log(), "attempt 2"), 1);  // only the started one was charged
  EXPECT_EQ(count(second->log(), "attempt 1"), 2);
  EXPECT_TRUE(dlq().empty());
}

// kill -9 while a throttled backlog waits for its turns: the waiting ones are parked (held by
// no worker), so the next worker runs every one exactly once, none charged, none lost.
TEST_F(FlowControl, AKillWhileAThrottledBacklogWaitsRunsEachOnceOnTheNextWorker) {
  writeApp("v1", "slowapi",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [call]}\n"
           "    timeout: 2s\n    retries: 0\n    throttle: {limit: 5, period: 1s}\n",
           {{"bin/h.sh", kRecordingHandler}});
  auto first = worker("v1", "first");
  for (int i = 0; i < 10; ++i) xadd(R"({"kind":"call","n":)" + std::to_string(i) + "}");
  ASSERT_TRUE(waitUntil([&] { return stat("slowapi/bin/h.sh", "succeeded") >= 1; }))
      << first->log();
  first->signal(SIGKILL);
  first->wait();
  EXPECT_GE(pendingByConsumer()[std::string(invocation::kParkingConsumer)], 5);
  auto second = worker("v1", "second");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(40))) << second->log();
  std::map<std::string, int> times;
  for (const HandlerRun& run : runs("v1", "slowapi")) ++times[run.event];
  // Every event started exactly once: the waiting ones on the second worker, uncharged; one the
  // kill interrupted was charged (`retries: 0`: dead-lettered, not run again).
  EXPECT_EQ(times.size(), 10u);
  for (const auto& [event, n] : times) EXPECT_EQ(n, 1) << event;
  const auto entries = dlq();
  EXPECT_LE(entries.size(), 2u);
  for (const auto& entry : entries) EXPECT_EQ(entry.at("reason"), "worker lost during attempt 1");
}

// A deferred backlog is not re-processed per sweep: 500 events behind a throttle of one per
// hour and 500 behind a busy key cost three seconds of sweeps nothing but heartbeats and due
// polls (docs/pipeline.md "Flow control": O(1) per start, not O(backlog) per minute).
TEST_F(FlowControl, ADeferredBacklogCostsNothingPerSweep) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [call]}\n"
           "    throttle: {limit: 1, period: 1h}\n"
           "  - handler: bin/k.sh\n    pattern: {kind: [job]}\n    timeout: 1m\n"
           "    concurrency: {limit: 1, key: tenant}\n",
           {{"bin/h.sh", kRecordingHandler}, {"bin/k.sh", kRecordingHandler}});
  appsRoot("v1").write("shop/slow", "");  // the key's one running invocation never ends
  auto a = worker("v1", "a");
  constexpr int kEach = 500;
  for (int i = 0; i < kEach; ++i) {
    xadd(R"({"kind":"call"})");
    xadd(R"({"kind":"job","tenant":"a"})");
  }
  // All but the two that run are parked.
  ASSERT_TRUE(waitUntil([&] {
    return pendingByConsumer()[std::string(invocation::kParkingConsumer)] == 2 * kEach - 2;
  })) << a->log();
  const long long evals = calls("evalsha") + calls("eval");
  const long long claims = calls("xclaim") + calls("xautoclaim");
  std::this_thread::sleep_for(seconds(3));  // fifteen reclaim sweeps, fifteen due polls at least
  // The two running claims' renewals (every 100 ms here), heartbeats, housekeeping and due
  // polls only (117 scripts and 58 XCLAIMs on a quiet machine): not one call per parked
  // message, which would be 998 a sweep, fifteen sweeps.
  EXPECT_LT(calls("evalsha") + calls("eval") - evals, 400);
  EXPECT_LT(calls("xclaim") + calls("xautoclaim") - claims, 200);
  EXPECT_EQ(runs("v1", "shop").size(), 2u);
  std::filesystem::remove(appsRoot("v1").path() / "shop/slow");
}

// Parked work due before the due poller's next look wakes it: a throttle's first turns (parked
// while the due index was empty) and a key's waiters woken by an outcome start at their time,
// not a poll interval (here a minute) later.
TEST_F(FlowControl, TurnsAndWokenWaitersStartWithoutWaitingForThePollInterval) {
  writeApp("v1", "shop",
           "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [call]}\n"
           "    throttle: {limit: 10, period: 1s}\n"
           "  - handler: bin/k.sh\n    pattern: {kind: [job]}\n"
           "    concurrency: {limit: 1, key: tenant}\n",
           {{"bin/h.sh", kRecordingHandler}, {"bin/k.sh", kRecordingHandler}});
  auto a = worker("v1", "a", {"RELAY_TEST_DUE_POLL=60s"});
  for (int i = 0; i < 5; ++i) xadd(R"({"kind":"call","n":)" + std::to_string(i) + "}");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << a->log();
  for (int i = 0; i < 5; ++i) xadd(R"({"kind":"job","tenant":"t","n":)" + std::to_string(i) + "}");
  ASSERT_TRUE(waitUntil([&] { return pending() == 0; }, seconds(30))) << a->log();
  EXPECT_EQ(runs("v1", "shop").size(), 10u);
  EXPECT_EQ(mostAtOnce(runs("v1", "shop"), R"("tenant":"t")"), 1);
}

}  // namespace
}  // namespace relay::testing
