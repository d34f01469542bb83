// `relay start` (process runtime) exporting to a real OTLP/HTTP receiver: a producer's
// traceparent is continued through the message and attempt spans into the handler's
// TRACEPARENT; a malformed one changes nothing for the message; without OTEL_* nothing is traced.
#include <sys/wait.h>

#include "integration/tracing/relay_start_tracing_fixture.h"

namespace relay::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

TEST_F(RelayStartTracing, TheProducersTraceReachesTheHandlerThroughTheSpans) {
  ASSERT_GT(receiver_.port(), 0) << receiver_.log();
  auto relay = start();
  const auto [id, saw] = publishTraced(*relay);
  ASSERT_FALSE(saw.empty()) << relay->log();
  EXPECT_NE(mappedFiles(relay->pid()).find("relay-otel.so"), std::string::npos);
  ASSERT_TRUE(receiver_.waitFor([&](const std::vector<json>& spans) {
    return spansOf(spans, id).size() >= 2;
  })) << relay->log();
  const std::vector<json> spans = spansOf(receiver_.spans(), id);
  const json* receive = named(spans, "receive events");
  const json* invoke = named(spans, "invoke shop/bin/record.sh");
  ASSERT_NE(receive, nullptr) << json(spans).dump();
  ASSERT_NE(invoke, nullptr) << json(spans).dump();
  EXPECT_EQ((*receive)["trace_id"], kTraceId);
  EXPECT_EQ((*receive)["parent_span_id"], "00f067aa0ba902b7");
  EXPECT_EQ((*receive)["kind"], 5);  // SPAN_KIND_CONSUMER
  EXPECT_EQ((*receive)["attributes"]["relay.classification"], "matched");
  EXPECT_EQ((*receive)["attributes"]["relay.invocations"], 1);
  EXPECT_EQ((*receive)["resource"]["service.name"], "relay-e2e");
  EXPECT_EQ((*invoke)["trace_id"], kTraceId);
  EXPECT_EQ((*invoke)["parent_span_id"], (*receive)["span_id"]);
  EXPECT_EQ((*invoke)["trace_state"], "vendor=abc");
  EXPECT_EQ((*invoke)["attributes"]["relay.app"], "shop");
  EXPECT_EQ((*invoke)["attributes"]["relay.handler"], "bin/record.sh");
  EXPECT_EQ((*invoke)["attributes"]["relay.attempt"], 1);
  EXPECT_EQ((*invoke)["attributes"]["relay.trigger"], "event");
  EXPECT_EQ((*invoke)["attributes"]["relay.outcome"], "succeeded");
  EXPECT_TRUE((*invoke)["attributes"].contains("relay.duration_ms")) << invoke->dump();
  // The handler saw the same trace with its attempt's span as the parent, not the template's.
  EXPECT_EQ(saw, "00-" + std::string(kTraceId) + "-" + (*invoke)["span_id"].get<std::string>() +
                     "-01 vendor=abc");
}

TEST_F(RelayStartTracing, AFailedAttemptIsAnErrorSpan) {
  auto relay = start();
  const std::string id =
      xadd({"event", R"({"kind":"order","fail":true})", "traceparent", kProducerTraceparent});
  ASSERT_TRUE(receiver_.waitFor([&](const std::vector<json>& spans) {
    return named(spansOf(spans, id), "invoke shop/bin/fail.sh") != nullptr;
  })) << relay->log();
  const json failed = *named(spansOf(receiver_.spans(), id), "invoke shop/bin/fail.sh");
  EXPECT_EQ(failed["trace_id"], kTraceId);
  EXPECT_EQ(failed["attributes"]["relay.outcome"], "failed");
  EXPECT_EQ(failed["status_code"], 2);  // STATUS_CODE_ERROR
  EXPECT_EQ(failed["status_message"], "exit 3");
}

TEST_F(RelayStartTracing, AMalformedTraceparentLeavesTheMessageProcessedNormally) {
  auto relay = start();
  const std::string id = xadd({"event", R"({"kind":"order"})", "traceparent", "00-nonsense"});
  const std::string saw = handlerSaw(*relay, id);
  ASSERT_FALSE(saw.empty()) << relay->log();
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return pending() == 0; }, seconds(30)));
  EXPECT_TRUE(relay->waitForLog("malformed traceparent ignored")) << relay->log();
  EXPECT_EQ(*redis_->command({"XLEN", "relay:events:dlq"})->integer(), 0);
  // Its spans start a new trace, and the handler is given that one.
  ASSERT_TRUE(receiver_.waitFor([&](const std::vector<json>& spans) {
    return named(spansOf(spans, id), "invoke") != nullptr;
  })) << relay->log();
  const std::vector<json> spans = spansOf(receiver_.spans(), id);
  const json* receive = named(spans, "receive");
  ASSERT_NE(receive, nullptr) << json(spans).dump();
  EXPECT_EQ((*receive)["parent_span_id"], "");
  EXPECT_NE((*receive)["trace_id"], kTraceId);
  EXPECT_EQ(saw.rfind("00-" + (*receive)["trace_id"].get<std::string>() + "-", 0), 0u) << saw;
}

TEST_F(RelayStartTracing, WithoutAnEndpointNothingIsTracedAndHandlersKeepTheirEnv) {
  SpawnedProcess relay({RELAY_BINARY, "start"}, environment(),
                       (logs_.path() / "plain.log").string());
  ASSERT_TRUE(relay.waitForLog("relay started")) << relay.log();
  EXPECT_EQ(publishTraced(relay).second, "from-the-template none") << relay.log();
  EXPECT_EQ(relay.log().find("tracing on"), std::string::npos) << relay.log();
  // The OpenTelemetry libraries are not even loaded (docs/tracing.md "Configuration").
  const std::string mapped = mappedFiles(relay.pid());
  EXPECT_NE(mapped.find("/relay"), std::string::npos);
  EXPECT_EQ(mapped.find("relay-otel.so"), std::string::npos);
  EXPECT_EQ(mapped.find("libopentelemetry"), std::string::npos) << mapped;
}

TEST_F(RelayStartTracing, ABadSamplerStopsStartNamingTheVariable) {
  std::vector<std::string> env = environment();
  env.insert(env.end(), {"OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver_.endpoint(),
                         "OTEL_TRACES_SAMPLER=sometimes"});
  SpawnedProcess relay({RELAY_BINARY, "start"}, env, (logs_.path() / "bad.log").string());
  const int status = relay.wait();
  ASSERT_TRUE(WIFEXITED(status)) << relay.log();
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(relay.log().find("OTEL_TRACES_SAMPLER=\"sometimes\""), std::string::npos)
      << relay.log();
  EXPECT_EQ(*redis_->command({"EXISTS", "events"})->integer(), 0);
}

}  // namespace
}  // namespace relay::testing
