// Lifecycle::settleRead (docs/pipeline.md "Acknowledgements in batches") over the in-memory
// store: a read's unowed messages are settled in one store call, never a message that owes.
#include <gtest/gtest.h>

#include "fakes/in_memory_lifecycle_store.h"
#include "lifecycle_parts.h"

namespace relay::invocation {
namespace {

using Kind = Classification::Kind;

PlannedInvocation handlerH(int max_attempts) {
  PlannedInvocation invocation;
  invocation.app = "shop";
  invocation.handler = "h";
  invocation.max_attempts = max_attempts;
  invocation.timeout = std::chrono::seconds(30);
  return invocation;
}

/// Forwards every verb to the in-memory store and counts the calls.
class CountingStore final : public LifecycleStore {
 public:
  explicit CountingStore(LifecycleStore& inner) : inner_(inner) {}
  Result<StartVerdict> start(std::string_view id, const StartRequest& request) override {
    ++calls;
    return inner_.start(id, request);
  }
  Result<BeginVerdict> begin(std::string_view id, std::string_view field,
                             std::string_view token) override {
    ++calls;
    return inner_.begin(id, field, token);
  }
  Status heartbeat(const ClaimTimes& times) override { return inner_.heartbeat(times); }
  Result<CompleteVerdict> complete(std::string_view id, std::string_view field,
                                   std::string_view token, const AttemptResult& result,
                                   const DlqEntry* dlq, const AttemptRecord* finished,
                                   const FlowControl* flow) override {
    ++calls;
    return inner_.complete(id, field, token, result, dlq, finished, flow);
  }
  Result<ReleaseVerdict> release(std::string_view id, std::string_view field,
                                 std::string_view token, std::chrono::milliseconds retry_after,
                                 bool unjournal, const FlowControl* flow) override {
    ++calls;
    return inner_.release(id, field, token, retry_after, unjournal, flow);
  }
  Result<RenewVerdict> renew(std::string_view id, std::string_view field, std::string_view token,
                             std::chrono::milliseconds extend, const FlowControl* flow) override {
    ++calls;
    return inner_.renew(id, field, token, extend, flow);
  }
  Result<DlqVerdict> writeDlq(std::string_view id, std::string_view field,
                              const DlqEntry& entry) override {
    ++calls;
    return inner_.writeDlq(id, field, entry);
  }
  Result<AckVerdict> acknowledge(std::string_view id, bool obsolete_occurrence) override {
    ++calls;
    return inner_.acknowledge(id, obsolete_occurrence);
  }
  Status clearMissing(std::string_view id) override {
    ++calls;
    return inner_.clearMissing(id);
  }
  Result<CancelVerdict> cancel(std::string_view id, const CancelRequest& request) override {
    ++calls;
    return inner_.cancel(id, request);
  }
  Status journal(std::string_view id, const AttemptRecord& record) override {
    ++calls;
    return inner_.journal(id, record);
  }
  std::vector<Result<SettleVerdict>> settle(const std::vector<SettleRequest>& requests) override {
    ++settles;
    settled += requests.size();
    return inner_.settle(requests);  // its verbs are not counted: one call, one round trip
  }

  int calls = 0;
  int settles = 0;
  std::size_t settled = 0;

 private:
  LifecycleStore& inner_;
};

class LifecycleSettle : public ::testing::Test, protected LifecycleParts {
 protected:
  void SetUp() override {
    catalog_.app("shop", {"h"});
    // The event names its classification.
    catalog_.setClassify([](const Message& message, WallTime) {
      Classification what;
      const std::string event = message.fields.front().second;
      if (event == "match") {
        what.kind = Kind::kPlan;
        what.plan.invocations = {handlerH(1)};
      } else if (event == "bad") {
        what.kind = Kind::kMalformed;
        what.reason = "malformed: not a JSON object";
        what.dlq_event = event;
      } else {
        what.kind = event == "hold" ? Kind::kHold : Kind::kUnmatched;
      }
      return what;
    });
  }
  Message message(const std::string& event) {
    Message m;
    m.id = std::to_string(++next_id_) + "-0";
    m.fields = {{"event", event}};
    inner_.deliver(m.id);
    return m;
  }
  static std::vector<std::string> ids(const std::vector<ClassifiedMessage>& messages) {
    std::vector<std::string> out;
    for (const ClassifiedMessage& m : messages) out.push_back(m.message.id);
    return out;
  }

  relay::testing::InMemoryLifecycleStore inner_{store_clock_};
  CountingStore store_{inner_};
  static LifecycleSettings settings() {
    LifecycleSettings settings;
    settings.keys = {"events", "relay"};
    settings.consumer = "w1";
    return settings;
  }
  Lifecycle lifecycle_{settings(), catalog_, runtime_, limiter_, nullptr,
                       observer_,  metrics_, logger_,  clock_,   random_};
  std::atomic<bool> stopping_{false};
  int next_id_ = 0;
};

TEST_F(LifecycleSettle, AReadsUnmatchedAndMalformedMessagesAreSettledInOneStoreCall) {
  const Message a = message("nothing"), b = message("bad"), c = message("match"),
                d = message("nothing"), e = message("hold");
  const std::vector<ClassifiedMessage> rest = lifecycle_.settleRead(store_, {a, b, c, d, e});
  EXPECT_EQ(ids(rest), (std::vector<std::string>{c.id, e.id}));
  EXPECT_EQ(store_.settles, 1);
  EXPECT_EQ(store_.settled, 3u);
  EXPECT_EQ(store_.calls, 0);
  EXPECT_FALSE(inner_.pending(a.id));
  EXPECT_FALSE(inner_.pending(b.id));
  EXPECT_FALSE(inner_.pending(d.id));
  EXPECT_TRUE(inner_.pending(c.id));  // owes a handler: for the pool, not acknowledged
  EXPECT_TRUE(inner_.pending(e.id));
  EXPECT_EQ(inner_.dlq().size(), 1u);
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 2);
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "malformed"}}), 1);
  EXPECT_EQ(runtime_.runs().size(), 0u);
}

TEST_F(LifecycleSettle, AMessageWithAnUnresolvedRecordedPlanIsNeverAcknowledgedAndGoesToThePool) {
  const Message m = message("match");
  runtime_.script("shop/h", {"exit 1"});
  // First delivery: the plan is recorded and its first attempt fails, retries left.
  catalog_.setClassify([](const Message&, WallTime) {
    Classification what;
    what.kind = Kind::kPlan;
    what.plan.invocations = {handlerH(3)};
    return what;
  });
  EXPECT_EQ(lifecycle_.process(store_, m, stopping_), Delivery::kPending);
  // A rule edit later: the same message now classifies unmatched, but it owes its plan.
  catalog_.setClassify([](const Message&, WallTime) {
    Classification what;
    what.kind = Kind::kUnmatched;
    return what;
  });
  const std::vector<ClassifiedMessage> rest = lifecycle_.settleRead(store_, {m});
  EXPECT_EQ(ids(rest), (std::vector<std::string>{m.id}));
  EXPECT_TRUE(inner_.pending(m.id));
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 0);
  // It travels to the pool with its recorded plan, which runs as recorded.
  ASSERT_TRUE(rest[0].classification);
  EXPECT_EQ(rest[0].classification->kind, Kind::kPlan);
  ASSERT_EQ(rest[0].classification->plan.invocations.size(), 1u);
  EXPECT_EQ(rest[0].classification->plan.invocations[0].field(), "shop/h");
}

// docs/pipeline.md "Acknowledgements in batches": the reader's classification travels with the
// message to the pool, so a matched message is decoded and matched once per delivery.
TEST_F(LifecycleSettle, AMatchedMessageIsClassifiedOncePerDelivery) {
  const Message m = message("match");
  const int before = catalog_.classifications();
  const std::vector<ClassifiedMessage> rest = lifecycle_.settleRead(store_, {m});
  ASSERT_EQ(rest.size(), 1u);
  ASSERT_TRUE(rest[0].classification);
  EXPECT_EQ(rest[0].classification->kind, Kind::kPlan);
  EXPECT_EQ(lifecycle_.process(store_, rest[0].message, stopping_, &*rest[0].classification),
            Delivery::kAcked);
  EXPECT_EQ(catalog_.classifications() - before, 1);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
}

// docs/pipeline.md "One message": a matched message with one handler that succeeds costs three
// store calls, start (plan + claim + the attempt's journal record), begin (the handler started:
// the attempt counts) and complete (outcome + journal record + XACK), and its attempt is
// journaled from claim to outcome all the same.
TEST_F(LifecycleSettle, AMatchedMessageCostsThreeStoreCallsAndItsAttemptIsJournaled) {
  const Message m = message("match");
  EXPECT_EQ(lifecycle_.process(store_, m, stopping_), Delivery::kAcked);
  EXPECT_EQ(store_.calls, 3);
  EXPECT_FALSE(inner_.pending(m.id));
  const std::vector<AttemptRecord> records = inner_.attempts(m.id);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].app, "shop");
  EXPECT_EQ(records[0].handler, "h");
  EXPECT_EQ(records[0].attempt, 1);
  EXPECT_EQ(records[0].consumer, "w1");
  EXPECT_EQ(records[0].outcome, "succeeded");
  EXPECT_GT(records[0].finished_ms, 0);
  EXPECT_EQ(metrics_.value("relay_redis_errors_total", {{"op", "journal"}}), 0);
}

// A journal that cannot be written is counted and changes nothing else.
TEST_F(LifecycleSettle, AJournalThatCannotBeWrittenIsCountedAndTheMessageStillAcknowledged) {
  const Message m = message("match");
  inner_.breakJournal(m.id);
  EXPECT_EQ(lifecycle_.process(store_, m, stopping_), Delivery::kAcked);
  EXPECT_FALSE(inner_.pending(m.id));
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
  // The started record and the finished one.
  EXPECT_EQ(metrics_.value("relay_redis_errors_total", {{"op", "journal"}}), 2);
}

}  // namespace
}  // namespace relay::invocation
