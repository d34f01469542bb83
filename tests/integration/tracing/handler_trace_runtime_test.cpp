// On each runtime (RELAY_TRACING_RUNTIME: process, sandbox, docker), a handler started by
// `relay start` gets TRACEPARENT/TRACESTATE continuing the producer's trace through its attempt's
// span, replacing the template's own.
#include "integration/tracing/relay_start_tracing_fixture.h"

namespace relay::testing {
namespace {

using nlohmann::json;

// One suite name per runtime (RELAY_TRACING_SUITE), so ctest keeps the executables apart.
class RELAY_TRACING_SUITE : public RelayStartTracing {};

TEST_F(RELAY_TRACING_SUITE, TheHandlerJoinsTheProducersTraceOnThisRuntime) {
  ASSERT_GT(receiver_.port(), 0) << receiver_.log();
  auto relay = start();
  const auto [id, saw] = publishTraced(*relay);
  ASSERT_FALSE(saw.empty()) << relay->log();
  ASSERT_TRUE(receiver_.waitFor([&](const std::vector<json>& spans) {
    return named(spansOf(spans, id), "invoke shop/bin/record.sh") != nullptr;
  })) << relay->log();
  const json invoke = *named(spansOf(receiver_.spans(), id), "invoke shop/bin/record.sh");
  EXPECT_EQ(invoke["trace_id"], kTraceId);
  EXPECT_EQ(saw, "00-" + std::string(kTraceId) + "-" + invoke["span_id"].get<std::string>() +
                     "-01 vendor=abc");
}

}  // namespace
}  // namespace relay::testing
