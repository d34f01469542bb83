// The Tracer against a real OTLP/HTTP receiver: spans arrive in the producer's trace with the
// right parents, attributes and status.
#include "tracing/tracer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/system_clock.h"
#include "support/otlp_receiver.h"

namespace relay::tracing {
namespace {

using nlohmann::json;
using relay::testing::OtlpReceiver;

constexpr const char* kProducer = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

class TracerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Tracer> tracer(Sampler sampler = Sampler::kParentBasedAlwaysOn) {
    TracingConfig config;
    config.traces_url = receiver_.endpoint() + "/v1/traces";
    config.service_name = "relay-test";
    config.sampler = sampler;
    config.schedule_delay = std::chrono::milliseconds(50);
    auto created = Tracer::load(config, logger_, RELAY_OTEL_MODULE);
    EXPECT_TRUE(created.ok());
    return created.ok() ? std::move(created).value() : nullptr;
  }
  static const json* named(const std::vector<json>& spans, const std::string& name) {
    for (const json& span : spans) {
      if (span["name"] == name) return &span;
    }
    return nullptr;
  }

  OtlpReceiver receiver_;
  SystemClock clock_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kDebug,
                                observability::LogFormat::kText};
};

TEST_F(TracerTest, MessageAndAttemptSpansContinueTheProducersTrace) {
  ASSERT_GT(receiver_.port(), 0) << receiver_.log();
  auto traces = tracer();
  ASSERT_NE(traces, nullptr);
  TraceContext producer = *parseTraceparent(kProducer);
  producer.tracestate = "vendor=abc";
  TraceContext handed_over;
  {
    Span message = traces->startMessage("events", "1-0", producer);
    message.set("relay.classification", "matched");
    message.end();
    Span attempt = traces->startAttempt(message, "1-0", "shop", "bin/h.sh", 2, "event");
    handed_over = attempt.context();
    attempt.set("relay.outcome", "failed");
    attempt.fail("exit 3");
  }
  ASSERT_TRUE(traces->flush(std::chrono::seconds(10)));
  ASSERT_TRUE(receiver_.waitFor([](const auto& spans) { return spans.size() >= 2; }))
      << receiver_.log() << log_.str();
  const std::vector<json> spans = receiver_.spans();
  const json* message = named(spans, "receive events");
  const json* attempt = named(spans, "invoke shop/bin/h.sh");
  ASSERT_NE(message, nullptr) << json(spans).dump();
  ASSERT_NE(attempt, nullptr) << json(spans).dump();
  EXPECT_EQ((*message)["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ((*message)["parent_span_id"], "00f067aa0ba902b7");
  EXPECT_EQ((*message)["kind"], 5);  // SPAN_KIND_CONSUMER
  EXPECT_EQ((*message)["attributes"]["messaging.message.id"], "1-0");
  EXPECT_EQ((*message)["attributes"]["messaging.destination.name"], "events");
  EXPECT_EQ((*message)["attributes"]["relay.classification"], "matched");
  EXPECT_EQ((*message)["resource"]["service.name"], "relay-test");
  EXPECT_EQ((*attempt)["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ((*attempt)["parent_span_id"], (*message)["span_id"]);
  EXPECT_EQ((*attempt)["attributes"]["relay.app"], "shop");
  EXPECT_EQ((*attempt)["attributes"]["relay.handler"], "bin/h.sh");
  EXPECT_EQ((*attempt)["attributes"]["relay.attempt"], 2);
  EXPECT_EQ((*attempt)["attributes"]["relay.outcome"], "failed");
  EXPECT_EQ((*attempt)["status_code"], 2);  // STATUS_CODE_ERROR
  EXPECT_EQ((*attempt)["status_message"], "exit 3");
  EXPECT_EQ((*attempt)["trace_state"], "vendor=abc");
  // What a handler gets: the same trace, the attempt span as parent.
  EXPECT_EQ(handed_over.traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-" +
                                           (*attempt)["span_id"].get<std::string>() + "-01");
  EXPECT_EQ(handed_over.tracestate, "vendor=abc");
}

TEST_F(TracerTest, WithoutAProducerContextAMessageStartsANewTrace) {
  auto traces = tracer();
  ASSERT_NE(traces, nullptr);
  { Span message = traces->startMessage("events", "2-0", std::nullopt); }
  ASSERT_TRUE(traces->flush(std::chrono::seconds(10)));
  ASSERT_TRUE(receiver_.waitFor([](const auto& spans) { return spans.size() == 1; }));
  const json span = receiver_.spans().front();
  EXPECT_EQ(span["parent_span_id"], "");
  EXPECT_EQ(span["trace_id"].get<std::string>().size(), 32u);
  EXPECT_NE(span["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
}

TEST_F(TracerTest, TheProducersSamplingDecisionIsFollowed) {
  auto traces = tracer(Sampler::kParentBasedAlwaysOn);
  ASSERT_NE(traces, nullptr);
  TraceContext unsampled =
      *parseTraceparent("00-11111111111111111111111111111111-2222222222222222-00");
  TraceContext handed_over;
  {
    Span message = traces->startMessage("events", "3-0", unsampled);
    Span attempt = traces->startAttempt(message, "3-0", "shop", "bin/h.sh", 1, "event");
    handed_over = attempt.context();
    Span sampled = traces->startMessage("events", "4-0", *parseTraceparent(kProducer));
  }
  ASSERT_TRUE(traces->flush(std::chrono::seconds(10)));
  ASSERT_TRUE(receiver_.waitFor([](const auto& spans) { return !spans.empty(); }));
  const std::vector<json> spans = receiver_.spans();
  ASSERT_EQ(spans.size(), 1u) << json(spans).dump();
  EXPECT_EQ(spans[0]["attributes"]["messaging.message.id"], "4-0");
  // The unsampled trace still propagates, unsampled, to the handler.
  EXPECT_EQ(handed_over.traceIdHex(), "11111111111111111111111111111111");
  EXPECT_FALSE(handed_over.sampled());
}

/// A debug-level text logger whose output the test reads.
struct CapturedLog {
  SystemClock clock;
  std::ostringstream text;
  observability::Logger logger{text, clock, observability::LogLevel::kDebug,
                               observability::LogFormat::kText};
};

TEST(TracerWithoutCollector, AnUnreachableCollectorIsNotAnError) {
  CapturedLog log;
  TracingConfig config;
  config.traces_url = "http://127.0.0.1:1/v1/traces";
  config.schedule_delay = std::chrono::milliseconds(10);
  config.export_timeout = std::chrono::milliseconds(500);
  auto traces = Tracer::load(config, log.logger, RELAY_OTEL_MODULE);
  ASSERT_TRUE(traces.ok());
  { Span message = (*traces)->startMessage("events", "1-0", std::nullopt); }
  (void)(*traces)->flush(std::chrono::seconds(5));
  traces->reset();
  // The SDK's complaint went through Relay's logger, not straight to stderr.
  EXPECT_NE(log.text.str().find("opentelemetry"), std::string::npos) << log.text.str();
}

TEST(TracerLoad, AMissingModuleIsAClearErrorNamingIt) {
  CapturedLog log;
  TracingConfig config;
  config.traces_url = "http://127.0.0.1:1/v1/traces";
  auto traces = Tracer::load(config, log.logger, "/nonexistent/relay-otel.so");
  ASSERT_FALSE(traces.ok());
  EXPECT_EQ(traces.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(traces.error().message.find("/nonexistent/relay-otel.so cannot be loaded"),
            std::string::npos)
      << traces.error().message;
}

}  // namespace
}  // namespace relay::tracing
