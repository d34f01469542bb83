// The lifecycle's hooks as spans, over a recording Tracer: which spans start with which parent,
// what the handler's environment gets, and that a malformed traceparent only costs a debug line.
#include "tracing/tracing_observer.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <sstream>

#include "fakes/fake_clock.h"

namespace relay::tracing {
namespace {

/// A span as the recording tracer saw it.
struct Recorded {
  std::string name;
  std::optional<TraceContext> parent;  // the producer's context, or the message span's
  std::map<std::string, std::string> attributes;
  std::string failed;
  bool ended = false;
  TraceContext context;
};

class RecordingSpan final : public SpanBackend {
 public:
  explicit RecordingSpan(Recorded& span) : span_(span) {}
  void set(std::string_view key, std::string_view value) override {
    span_.attributes[std::string(key)] = std::string(value);
  }
  void set(std::string_view key, std::int64_t value) override {
    span_.attributes[std::string(key)] = std::to_string(value);
  }
  void fail(std::string_view reason) override { span_.failed = std::string(reason); }
  TraceContext context() const override { return span_.context; }
  void end() override { span_.ended = true; }

 private:
  Recorded& span_;
};

class RecordingTracer final : public Tracer {
 public:
  Span startMessage(std::string_view stream, std::string_view message_id,
                    const std::optional<TraceContext>& producer) override {
    Recorded& span = spans.emplace_back();
    span.name = "receive " + std::string(stream);
    span.parent = producer;
    span.context = producer ? *producer : TraceContext();
    span.context.parent_id = {0, 0, 0, 0, 0, 0, 0, static_cast<std::uint8_t>(spans.size())};
    span.attributes["messaging.message.id"] = std::string(message_id);
    return Span(std::make_unique<RecordingSpan>(span));
  }
  Span startAttempt(const Span& message, std::string_view message_id, std::string_view app,
                    std::string_view handler, int attempt, std::string_view trigger) override {
    Recorded& span = spans.emplace_back();
    span.name = "invoke " + std::string(app) + "/" + std::string(handler);
    span.parent = message.context();
    span.context = message.context();
    span.context.parent_id = {0, 0, 0, 0, 0, 0, 0, static_cast<std::uint8_t>(spans.size())};
    span.attributes["messaging.message.id"] = std::string(message_id);
    span.attributes["relay.attempt"] = std::to_string(attempt);
    span.attributes["relay.trigger"] = std::string(trigger);
    return Span(std::make_unique<RecordingSpan>(span));
  }
  bool flush(std::chrono::milliseconds) override { return true; }

  std::deque<Recorded> spans;  // stable addresses for the RecordingSpans
};

constexpr const char* kProducer = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

class TracingObserverTest : public ::testing::Test {
 protected:
  invocation::Message message(std::vector<std::pair<std::string, std::string>> fields) {
    return invocation::Message{"7-0", std::move(fields), false};
  }
  invocation::Classification matched() {
    invocation::Classification classification;
    classification.kind = invocation::Classification::Kind::kPlan;
    classification.plan.invocations.push_back(planned_);
    return classification;
  }

  testing::FakeClock clock_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kDebug,
                                observability::LogFormat::kText};
  RecordingTracer tracer_;
  TracingObserver observer_{tracer_, "events", logger_};
  invocation::PlannedInvocation planned_{"shop", "bin/h.sh"};
};

TEST_F(TracingObserverTest, TheAttemptContinuesTheProducersTraceAndReplacesTheAppsTraceparent) {
  const auto delivered =
      message({{"event", "{}"}, {"traceparent", kProducer}, {"tracestate", "vendor=abc"}});
  observer_.onMessage(delivered);
  observer_.onClassified(delivered, matched());
  std::vector<std::pair<std::string, std::string>> env = {{"TRACEPARENT", "from-the-app"},
                                                          {"KEEP", "1"}};
  const invocation::AttemptInfo attempt{delivered, planned_, 2};
  observer_.onAttemptStart(attempt, env);
  runtime::Outcome outcome{false, "exit 3", std::chrono::milliseconds(42)};
  observer_.onAttemptEnd(attempt, &outcome);

  ASSERT_EQ(tracer_.spans.size(), 2u);
  const Recorded& receive = tracer_.spans[0];
  ASSERT_TRUE(receive.parent.has_value());
  EXPECT_EQ(receive.parent->traceparent(), kProducer);
  EXPECT_EQ(receive.parent->tracestate, "vendor=abc");
  EXPECT_EQ(receive.attributes.at("relay.classification"), "matched");
  EXPECT_EQ(receive.attributes.at("relay.invocations"), "1");
  EXPECT_TRUE(receive.ended);
  const Recorded& invoke = tracer_.spans[1];
  EXPECT_EQ(invoke.name, "invoke shop/bin/h.sh");
  EXPECT_EQ(invoke.attributes.at("relay.attempt"), "2");
  EXPECT_EQ(invoke.attributes.at("relay.outcome"), "failed");
  EXPECT_EQ(invoke.attributes.at("relay.duration_ms"), "42");
  EXPECT_EQ(invoke.failed, "exit 3");
  EXPECT_TRUE(invoke.ended);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"KEEP", "1"}, {"TRACEPARENT", invoke.context.traceparent()}, {"TRACESTATE", "vendor=abc"}};
  EXPECT_EQ(env, expected);
}

TEST_F(TracingObserverTest, AMalformedTraceparentStartsANewTraceWithADebugLine) {
  const auto delivered = message({{"event", "{}"}, {"traceparent", "00-nonsense"}});
  observer_.onMessage(delivered);
  observer_.onClassified(delivered, matched());
  ASSERT_EQ(tracer_.spans.size(), 1u);
  EXPECT_FALSE(tracer_.spans[0].parent.has_value());
  EXPECT_NE(log_.str().find("debug malformed traceparent ignored message_id=7-0"),
            std::string::npos)
      << log_.str();
}

TEST_F(TracingObserverTest, AMalformedTracestateIsDroppedAndTheTraceparentKept) {
  const auto delivered =
      message({{"event", "{}"}, {"traceparent", kProducer}, {"tracestate", "no equals sign"}});
  observer_.onMessage(delivered);
  ASSERT_EQ(tracer_.spans.size(), 1u);
  ASSERT_TRUE(tracer_.spans[0].parent.has_value());
  EXPECT_EQ(tracer_.spans[0].parent->traceparent(), kProducer);
  EXPECT_EQ(tracer_.spans[0].parent->tracestate, "");
  EXPECT_NE(log_.str().find("malformed tracestate ignored"), std::string::npos) << log_.str();
}

// docs/pipeline.md "Cancellation": a handler stopped by a cancel says so, with its reason.
TEST_F(TracingObserverTest, ACancelledAttemptsSpanSaysCancelled) {
  const auto delivered = message({{"event", "{}"}});
  observer_.onMessage(delivered);
  observer_.onClassified(delivered, matched());
  std::vector<std::pair<std::string, std::string>> env;
  const invocation::AttemptInfo attempt{delivered, planned_, 1};
  observer_.onAttemptStart(attempt, env);
  runtime::Outcome outcome;
  outcome.reason = "cancelled";
  outcome.duration = std::chrono::milliseconds(7);
  outcome.cancelled = true;
  observer_.onAttemptEnd(attempt, &outcome);
  ASSERT_EQ(tracer_.spans.size(), 2u);
  EXPECT_EQ(tracer_.spans[1].attributes.at("relay.outcome"), "cancelled");
  EXPECT_EQ(tracer_.spans[1].failed, "cancelled");
  EXPECT_TRUE(tracer_.spans[1].ended);
}

TEST_F(TracingObserverTest, AnAttemptTheRuntimeCouldNotStartIsNotStarted) {
  const auto delivered = message({{"event", "{}"}});
  observer_.onMessage(delivered);
  observer_.onClassified(delivered, matched());
  std::vector<std::pair<std::string, std::string>> env;
  const invocation::AttemptInfo attempt{delivered, planned_, 1};
  observer_.onAttemptStart(attempt, env);
  observer_.onAttemptEnd(attempt, nullptr);
  ASSERT_EQ(tracer_.spans.size(), 2u);
  EXPECT_EQ(tracer_.spans[1].attributes.at("relay.outcome"), "not_started");
  EXPECT_EQ(tracer_.spans[1].attributes.count("relay.duration_ms"), 0u);
  EXPECT_TRUE(tracer_.spans[1].ended);
}

TEST_F(TracingObserverTest, AnUnmatchedMessageSaysWhyAndStartsNoAttempt) {
  const auto delivered = message({{"event", "{}"}});
  observer_.onMessage(delivered);
  invocation::Classification unmatched;
  unmatched.kind = invocation::Classification::Kind::kUnmatched;
  unmatched.reason = "no rule matches";
  observer_.onClassified(delivered, unmatched);
  ASSERT_EQ(tracer_.spans.size(), 1u);
  EXPECT_EQ(tracer_.spans[0].attributes.at("relay.classification"), "unmatched");
  EXPECT_EQ(tracer_.spans[0].attributes.at("relay.reason"), "no rule matches");
  EXPECT_EQ(tracer_.spans[0].attributes.at("relay.invocations"), "0");
}

// A replay copy's delivery says so, with its replay and original (docs/replay.md "Copies"); its
// attempt's trigger is `replay`.
TEST_F(TracingObserverTest, AReplayCopyIsMarkedWithItsReplayAndOriginal) {
  const auto delivered = message({{"event", "{}"}});
  observer_.onMessage(delivered);
  invocation::Classification copy = matched();
  copy.plan.invocations[0].trigger = runtime::Trigger::kReplay;
  copy.replay = invocation::ReplayOrigin{"r-1-abcd", "1715821203000-0", ""};
  observer_.onClassified(delivered, copy);
  std::vector<std::pair<std::string, std::string>> env;
  const invocation::AttemptInfo attempt{delivered, copy.plan.invocations[0], 1};
  observer_.onAttemptStart(attempt, env);
  observer_.onAttemptEnd(attempt, nullptr);
  ASSERT_EQ(tracer_.spans.size(), 2u);
  EXPECT_EQ(tracer_.spans[0].attributes.at("relay.classification"), "replay");
  EXPECT_EQ(tracer_.spans[0].attributes.at("relay.replay"), "r-1-abcd");
  EXPECT_EQ(tracer_.spans[0].attributes.at("relay.original_id"), "1715821203000-0");
  EXPECT_EQ(tracer_.spans[1].attributes.at("relay.trigger"), "replay");
}

}  // namespace
}  // namespace relay::tracing
