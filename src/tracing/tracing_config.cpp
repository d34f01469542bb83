#include "tracing/tracing_config.h"

#include <cstdlib>

#include "common/whole_number.h"

namespace relay::tracing {
namespace {

Error bad(std::string_view name, const std::string& value, std::string_view expected) {
  return Error::invalid(std::string(name) + "=\"" + value + "\": " + std::string(expected));
}

bool httpUrl(std::string_view url) {
  return (url.starts_with("http://") && url.size() > 7) ||
         (url.starts_with("https://") && url.size() > 8);
}

// Milliseconds as the OTEL_* variables give them: a whole number.
std::optional<std::chrono::milliseconds> millis(const std::string& value) {
  long long parsed = 0;
  if (!parseWholeNumber(value, parsed) || parsed < 0) return std::nullopt;
  return std::chrono::milliseconds(parsed);
}

}  // namespace

Result<std::optional<TracingConfig>> loadTracingConfig(const Environment& environment) {
  if (auto disabled = environment("OTEL_SDK_DISABLED"); disabled && *disabled == "true") {
    return std::optional<TracingConfig>();
  }
  TracingConfig config;
  if (auto traces = environment("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); traces && !traces->empty()) {
    if (!httpUrl(*traces)) {
      return bad("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", *traces,
                 "expected an http:// or https:// URL");
    }
    config.traces_url = *traces;
  } else if (auto base = environment("OTEL_EXPORTER_OTLP_ENDPOINT"); base && !base->empty()) {
    if (!httpUrl(*base)) {
      return bad("OTEL_EXPORTER_OTLP_ENDPOINT", *base,
                 "expected an http:// or https:// URL such as http://127.0.0.1:4318");
    }
    config.traces_url = *base + (base->back() == '/' ? "v1/traces" : "/v1/traces");
  } else {
    return std::optional<TracingConfig>();
  }
  if (auto name = environment("OTEL_SERVICE_NAME"); name && !name->empty()) {
    config.service_name = *name;
  }
  if (auto sampler = environment("OTEL_TRACES_SAMPLER"); sampler && !sampler->empty()) {
    static const std::pair<const char*, Sampler> kSamplers[] = {
        {"always_on", Sampler::kAlwaysOn},
        {"always_off", Sampler::kAlwaysOff},
        {"traceidratio", Sampler::kTraceIdRatio},
        {"parentbased_always_on", Sampler::kParentBasedAlwaysOn},
        {"parentbased_always_off", Sampler::kParentBasedAlwaysOff},
        {"parentbased_traceidratio", Sampler::kParentBasedTraceIdRatio},
    };
    bool known = false;
    for (const auto& [text, value] : kSamplers) {
      if (*sampler == text) {
        config.sampler = value;
        known = true;
      }
    }
    if (!known) {
      return bad("OTEL_TRACES_SAMPLER", *sampler,
                 "expected always_on, always_off, traceidratio, parentbased_always_on, "
                 "parentbased_always_off or parentbased_traceidratio");
    }
  }
  if (auto arg = environment("OTEL_TRACES_SAMPLER_ARG"); arg && !arg->empty()) {
    char* end = nullptr;
    const double ratio = std::strtod(arg->c_str(), &end);
    const bool ratio_sampler = config.sampler == Sampler::kTraceIdRatio ||
                               config.sampler == Sampler::kParentBasedTraceIdRatio;
    if (ratio_sampler && (end != arg->c_str() + arg->size() || !(ratio >= 0 && ratio <= 1))) {
      return bad("OTEL_TRACES_SAMPLER_ARG", *arg, "expected a ratio from 0 to 1");
    }
    if (ratio_sampler) config.ratio = ratio;
  }
  for (const auto& [name, target] :
       {std::pair<const char*, std::chrono::milliseconds*>{"OTEL_BSP_SCHEDULE_DELAY",
                                                           &config.schedule_delay},
        {"OTEL_EXPORTER_OTLP_TIMEOUT", &config.export_timeout},
        {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", &config.export_timeout}}) {
    if (auto value = environment(name); value && !value->empty()) {
      const auto parsed = millis(*value);
      if (!parsed) return bad(name, *value, "expected a whole number of milliseconds");
      *target = *parsed;
    }
  }
  return std::optional<TracingConfig>(std::move(config));
}

}  // namespace relay::tracing
