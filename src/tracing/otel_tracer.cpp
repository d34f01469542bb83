// The Tracer over opentelemetry-cpp, built as the module relay-otel.so that Tracer::load opens
// (docs/tracing.md): the only code that links the OpenTelemetry libraries.
#include "tracing/tracer.h"

#include <opentelemetry/exporters/otlp/otlp_http_exporter_factory.h>
#include <opentelemetry/exporters/otlp/otlp_http_exporter_options.h>
#include <opentelemetry/sdk/common/global_log_handler.h>
#include <opentelemetry/sdk/resource/resource.h>
#include <opentelemetry/sdk/trace/batch_span_processor_factory.h>
#include <opentelemetry/sdk/trace/batch_span_processor_options.h>
#include <opentelemetry/sdk/trace/samplers/always_off_factory.h>
#include <opentelemetry/sdk/trace/samplers/always_on_factory.h>
#include <opentelemetry/sdk/trace/samplers/parent_factory.h>
#include <opentelemetry/sdk/trace/samplers/trace_id_ratio_factory.h>
#include <opentelemetry/sdk/trace/tracer_provider.h>
#include <opentelemetry/sdk/trace/tracer_provider_factory.h>
#include <opentelemetry/trace/span_context.h>
#include <opentelemetry/trace/tracer.h>

#include <exception>
#include <string>

namespace relay::tracing {
namespace {

namespace otel = opentelemetry;
namespace sdktrace = opentelemetry::sdk::trace;
namespace internal_log = opentelemetry::sdk::common::internal_log;

std::unique_ptr<sdktrace::Sampler> samplerOf(const TracingConfig& config) {
  switch (config.sampler) {
    case Sampler::kAlwaysOn:
      return sdktrace::AlwaysOnSamplerFactory::Create();
    case Sampler::kAlwaysOff:
      return sdktrace::AlwaysOffSamplerFactory::Create();
    case Sampler::kTraceIdRatio:
      return sdktrace::TraceIdRatioBasedSamplerFactory::Create(config.ratio);
    case Sampler::kParentBasedAlwaysOn:
      return sdktrace::ParentBasedSamplerFactory::Create(
          std::shared_ptr<sdktrace::Sampler>(sdktrace::AlwaysOnSamplerFactory::Create()));
    case Sampler::kParentBasedAlwaysOff:
      return sdktrace::ParentBasedSamplerFactory::Create(
          std::shared_ptr<sdktrace::Sampler>(sdktrace::AlwaysOffSamplerFactory::Create()));
    case Sampler::kParentBasedTraceIdRatio:
      return sdktrace::ParentBasedSamplerFactory::Create(std::shared_ptr<sdktrace::Sampler>(
          sdktrace::TraceIdRatioBasedSamplerFactory::Create(config.ratio)));
  }
  return sdktrace::AlwaysOnSamplerFactory::Create();
}

/// The SDK's own diagnostics (a failed export, a full queue) go to Relay's log, so that they
/// follow RELAY_LOG_FORMAT instead of printing raw lines to stderr.
class LogBridge final : public internal_log::LogHandler {
 public:
  explicit LogBridge(TracerLog log) : log_(std::move(log)) {}
  void Handle(internal_log::LogLevel level, const char* file, int line, const char* message,
              const otel::sdk::common::AttributeMap& attributes) noexcept override {
    (void)file;
    (void)line;
    (void)attributes;
    log_(level == internal_log::LogLevel::Error || level == internal_log::LogLevel::Warning,
         message ? message : "");
  }

 private:
  TracerLog log_;
};

otel::trace::SpanContext spanContextOf(const TraceContext& context, bool remote) {
  return otel::trace::SpanContext(
      otel::trace::TraceId(otel::nostd::span<const std::uint8_t, 16>(context.trace_id)),
      otel::trace::SpanId(otel::nostd::span<const std::uint8_t, 8>(context.parent_id)),
      otel::trace::TraceFlags(context.flags), remote,
      context.tracestate.empty() ? otel::trace::TraceState::GetDefault()
                                 : otel::trace::TraceState::FromHeader(context.tracestate));
}

/// A span of the SDK.
class OtelSpan final : public SpanBackend {
 public:
  explicit OtelSpan(otel::nostd::shared_ptr<otel::trace::Span> span) : span_(std::move(span)) {}

  void set(std::string_view key, std::string_view value) override {
    span_->SetAttribute(otel::nostd::string_view(key.data(), key.size()),
                        otel::nostd::string_view(value.data(), value.size()));
  }
  void set(std::string_view key, std::int64_t value) override {
    span_->SetAttribute(otel::nostd::string_view(key.data(), key.size()), value);
  }
  void fail(std::string_view reason) override {
    span_->SetStatus(otel::trace::StatusCode::kError,
                     otel::nostd::string_view(reason.data(), reason.size()));
  }
  TraceContext context() const override {
    TraceContext context;
    const otel::trace::SpanContext span = span_->GetContext();
    span.trace_id().CopyBytesTo(otel::nostd::span<std::uint8_t, 16>(context.trace_id));
    span.span_id().CopyBytesTo(otel::nostd::span<std::uint8_t, 8>(context.parent_id));
    context.flags = span.trace_flags().flags();
    context.tracestate = span.trace_state()->ToHeader();
    return context;
  }
  void end() override { span_->End(); }
  otel::trace::SpanContext spanContext() const { return span_->GetContext(); }

 private:
  otel::nostd::shared_ptr<otel::trace::Span> span_;
};

/// The Tracer over the SDK: owns its tracer provider (no global OpenTelemetry state but the
/// SDK's internal log handler, which it points at the Relay logger while it lives).
class OtelTracer final : public Tracer {
 public:
  explicit OtelTracer(std::unique_ptr<sdktrace::TracerProvider> provider)
      : provider_(std::move(provider)), tracer_(provider_->GetTracer("relay")) {}
  ~OtelTracer() override {
    provider_->Shutdown();  // exports the last batch
    internal_log::GlobalLogHandler::SetLogHandler(
        otel::nostd::shared_ptr<internal_log::LogHandler>(new internal_log::NoopLogHandler));
  }

  Span startMessage(std::string_view stream, std::string_view message_id,
                    const std::optional<TraceContext>& producer) override {
    otel::trace::StartSpanOptions options;
    options.kind = otel::trace::SpanKind::kConsumer;
    // Without a producer context: a new trace, not the thread's current span.
    options.parent =
        producer ? spanContextOf(*producer, true) : otel::trace::SpanContext::GetInvalid();
    Span span(
        std::make_unique<OtelSpan>(tracer_->StartSpan("receive " + std::string(stream), options)));
    span.set("messaging.system", "redis");
    span.set("messaging.operation.type", "receive");
    span.set("messaging.destination.name", stream);
    span.set("messaging.message.id", message_id);
    return span;
  }

  Span startAttempt(const Span& message, std::string_view message_id, std::string_view app,
                    std::string_view handler, int attempt, std::string_view trigger) override {
    otel::trace::StartSpanOptions options;
    options.kind = otel::trace::SpanKind::kInternal;
    // Every SpanBackend this module hands out is an OtelSpan.
    const auto* parent = static_cast<const OtelSpan*>(message.backend());
    options.parent = parent ? parent->spanContext() : otel::trace::SpanContext::GetInvalid();
    Span span(std::make_unique<OtelSpan>(
        tracer_->StartSpan("invoke " + std::string(app) + "/" + std::string(handler), options)));
    span.set("messaging.message.id", message_id);
    span.set("relay.app", app);
    span.set("relay.handler", handler);
    span.set("relay.attempt", static_cast<std::int64_t>(attempt));
    span.set("relay.trigger", trigger);
    return span;
  }

  bool flush(std::chrono::milliseconds timeout) override {
    return provider_->ForceFlush(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  }

 private:
  std::unique_ptr<sdktrace::TracerProvider> provider_;
  otel::nostd::shared_ptr<otel::trace::Tracer> tracer_;
};

}  // namespace
}  // namespace relay::tracing

// The module's entry point (tracer.h CreateTracerFunction), found by Tracer::load with dlsym.
extern "C" __attribute__((visibility("default"))) relay::tracing::Tracer* relay_otel_create_tracer(
    const relay::tracing::TracingConfig& config, const relay::tracing::TracerLog& log,
    std::string* error) {
  using namespace relay::tracing;
  try {
    internal_log::GlobalLogHandler::SetLogHandler(
        otel::nostd::shared_ptr<internal_log::LogHandler>(new LogBridge(log)));
    otel::exporter::otlp::OtlpHttpExporterOptions exporter_options;
    exporter_options.url = config.traces_url;
    exporter_options.content_type = otel::exporter::otlp::HttpRequestContentType::kBinary;
    exporter_options.timeout = config.export_timeout;
    exporter_options.console_debug = false;
    sdktrace::BatchSpanProcessorOptions batch;
    batch.schedule_delay_millis = config.schedule_delay;
    auto processor = sdktrace::BatchSpanProcessorFactory::Create(
        otel::exporter::otlp::OtlpHttpExporterFactory::Create(exporter_options), batch);
    const auto resource = otel::sdk::resource::Resource::Create(
        {{"service.name", config.service_name}, {"service.namespace", "relay"}});
    return new OtelTracer(
        sdktrace::TracerProviderFactory::Create(std::move(processor), resource, samplerOf(config)));
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}
