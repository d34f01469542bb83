#include "tracing/tracing_config.h"
#include "fakes/fake_environment.h"

#include <gtest/gtest.h>

#include <map>

namespace relay::tracing {
namespace {

using relay::testing::environmentOf;

TEST(TracingConfig, OffWithoutAnEndpoint) {
  auto config = loadTracingConfig(environmentOf({{"OTEL_SERVICE_NAME", "x"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->has_value());
}

TEST(TracingConfig, OffWhenTheSdkIsDisabled) {
  auto config = loadTracingConfig(environmentOf(
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_SDK_DISABLED", "true"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->has_value());
}

TEST(TracingConfig, TheBaseEndpointGetsTheTracesPath) {
  auto config =
      loadTracingConfig(environmentOf({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}}));
  ASSERT_TRUE(config.ok() && config->has_value());
  EXPECT_EQ((*config)->traces_url, "http://c:4318/v1/traces");
  EXPECT_EQ((*config)->service_name, "relay");
  EXPECT_EQ((*config)->sampler, Sampler::kParentBasedAlwaysOn);
  auto slash =
      loadTracingConfig(environmentOf({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://c/otlp/"}}));
  EXPECT_EQ((*slash)->traces_url, "https://c/otlp/v1/traces");
}

TEST(TracingConfig, TheTracesEndpointIsTakenAsGivenAndWins) {
  auto config =
      loadTracingConfig(environmentOf({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"},
                                       {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b/x"}}));
  ASSERT_TRUE(config.ok() && config->has_value());
  EXPECT_EQ((*config)->traces_url, "http://b/x");
}

TEST(TracingConfig, ReadsServiceNameSamplerRatioAndDelays) {
  auto config =
      loadTracingConfig(environmentOf({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                       {"OTEL_SERVICE_NAME", "relay-eu"},
                                       {"OTEL_TRACES_SAMPLER", "parentbased_traceidratio"},
                                       {"OTEL_TRACES_SAMPLER_ARG", "0.25"},
                                       {"OTEL_BSP_SCHEDULE_DELAY", "200"},
                                       {"OTEL_EXPORTER_OTLP_TIMEOUT", "3000"}}));
  ASSERT_TRUE(config.ok() && config->has_value()) << config.error().message;
  EXPECT_EQ((*config)->service_name, "relay-eu");
  EXPECT_EQ((*config)->sampler, Sampler::kParentBasedTraceIdRatio);
  EXPECT_DOUBLE_EQ((*config)->ratio, 0.25);
  EXPECT_EQ((*config)->schedule_delay, std::chrono::milliseconds(200));
  EXPECT_EQ((*config)->export_timeout, std::chrono::milliseconds(3000));
}

TEST(TracingConfig, BadValuesNameTheirVariable) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318"}}, "OTEL_EXPORTER_OTLP_ENDPOINT=\"c:4318\""},
      {{{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "grpc://c"}}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"}, {"OTEL_TRACES_SAMPLER", "sometimes"}},
       "OTEL_TRACES_SAMPLER=\"sometimes\": expected always_on"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"},
        {"OTEL_TRACES_SAMPLER", "traceidratio"},
        {"OTEL_TRACES_SAMPLER_ARG", "2"}},
       "OTEL_TRACES_SAMPLER_ARG=\"2\": expected a ratio from 0 to 1"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"}, {"OTEL_BSP_SCHEDULE_DELAY", "5s"}},
       "OTEL_BSP_SCHEDULE_DELAY=\"5s\": expected a whole number of milliseconds"},
  };
  for (const auto& [values, expected] : cases) {
    auto config = loadTracingConfig(environmentOf(values));
    ASSERT_FALSE(config.ok()) << expected;
    EXPECT_NE(config.error().message.find(expected), std::string::npos) << config.error().message;
  }
}

}  // namespace
}  // namespace relay::tracing
