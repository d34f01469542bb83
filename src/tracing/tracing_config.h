#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/environment.h"
#include "common/result.h"

namespace relay::tracing {

/// How spans are sampled: OTEL_TRACES_SAMPLER (docs/tracing.md "Configuration").
enum class Sampler {
  kAlwaysOn,
  kAlwaysOff,
  kTraceIdRatio,
  kParentBasedAlwaysOn,  // the OpenTelemetry default
  kParentBasedAlwaysOff,
  kParentBasedTraceIdRatio,
};

/// OpenTelemetry export settings, from the standard OTEL_* variables.
struct TracingConfig {
  /// Where OTLP/HTTP protobuf spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or
  /// OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`.
  std::string traces_url;
  std::string service_name = "relay";  // OTEL_SERVICE_NAME
  Sampler sampler = Sampler::kParentBasedAlwaysOn;
  double ratio = 1.0;  // OTEL_TRACES_SAMPLER_ARG for the ratio samplers
  /// OTEL_BSP_SCHEDULE_DELAY: how long finished spans wait to be sent in a batch.
  std::chrono::milliseconds schedule_delay{5'000};
  /// OTEL_EXPORTER_OTLP_TRACES_TIMEOUT / OTEL_EXPORTER_OTLP_TIMEOUT: one export request.
  std::chrono::milliseconds export_timeout{10'000};
};

/// The tracing configuration, or nullopt when neither OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor
/// OTEL_EXPORTER_OTLP_ENDPOINT is set (or OTEL_SDK_DISABLED=true): tracing is then off, at no
/// cost. A bad value is a kInvalidArgument error naming the variable and what was expected.
Result<std::optional<TracingConfig>> loadTracingConfig(const Environment& environment);

}  // namespace relay::tracing
