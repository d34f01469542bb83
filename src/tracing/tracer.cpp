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
  explicit LogBridge(observability::Logger& logger) : logger_(logger) {}
  void Handle(internal_log::LogLevel level, const char* file, int line, const char* message,
              const otel::sdk::common::AttributeMap& attributes) noexcept override {
    (void)file;
    (void)line;
    (void)attributes;
    const observability::LogFields fields = {{"detail", message ? message : ""}};
    if (level == internal_log::LogLevel::Error || level == internal_log::LogLevel::Warning) {
      logger_.warn("opentelemetry", fields);
    } else {
      logger_.debug("opentelemetry", fields);
    }
  }

 private:
  observability::Logger& logger_;
};

otel::trace::SpanContext spanContextOf(const TraceContext& context, bool remote) {
  return otel::trace::SpanContext(
      otel::trace::TraceId(otel::nostd::span<const std::uint8_t, 16>(context.trace_id)),
      otel::trace::SpanId(otel::nostd::span<const std::uint8_t, 8>(context.parent_id)),
      otel::trace::TraceFlags(context.flags), remote,
      context.tracestate.empty() ? otel::trace::TraceState::GetDefault()
                                 : otel::trace::TraceState::FromHeader(context.tracestate));
}

}  // namespace

struct Span::Impl {
  otel::nostd::shared_ptr<otel::trace::Span> span;
  bool ended = false;
};

Span::Span() = default;
Span::~Span() { end(); }
Span::Span(Span&&) noexcept = default;
Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    end();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

void Span::set(std::string_view key, std::string_view value) {
  if (impl_) {
    impl_->span->SetAttribute(otel::nostd::string_view(key.data(), key.size()),
                              otel::nostd::string_view(value.data(), value.size()));
  }
}

void Span::set(std::string_view key, std::int64_t value) {
  if (impl_) impl_->span->SetAttribute(otel::nostd::string_view(key.data(), key.size()), value);
}

void Span::fail(std::string_view reason) {
  if (impl_) {
    impl_->span->SetStatus(otel::trace::StatusCode::kError,
                           otel::nostd::string_view(reason.data(), reason.size()));
  }
}

TraceContext Span::context() const {
  TraceContext context;
  if (!impl_) return context;
  const otel::trace::SpanContext span = impl_->span->GetContext();
  span.trace_id().CopyBytesTo(otel::nostd::span<std::uint8_t, 16>(context.trace_id));
  span.span_id().CopyBytesTo(otel::nostd::span<std::uint8_t, 8>(context.parent_id));
  context.flags = span.trace_flags().flags();
  context.tracestate = span.trace_state()->ToHeader();
  return context;
}

void Span::end() {
  if (impl_ && !impl_->ended) {
    impl_->ended = true;
    impl_->span->End();
  }
}

struct Tracer::Impl {
  std::unique_ptr<sdktrace::TracerProvider> provider;
  otel::nostd::shared_ptr<otel::trace::Tracer> tracer;
};

Tracer::Tracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Tracer::~Tracer() {
  impl_->provider->Shutdown();  // exports the last batch
  internal_log::GlobalLogHandler::SetLogHandler(
      otel::nostd::shared_ptr<internal_log::LogHandler>(new internal_log::NoopLogHandler));
}

Result<std::unique_ptr<Tracer>> Tracer::create(const TracingConfig& config,
                                               observability::Logger& logger) {
  internal_log::GlobalLogHandler::SetLogHandler(
      otel::nostd::shared_ptr<internal_log::LogHandler>(new LogBridge(logger)));
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
  auto impl = std::make_unique<Impl>();
  impl->provider =
      sdktrace::TracerProviderFactory::Create(std::move(processor), resource, samplerOf(config));
  impl->tracer = impl->provider->GetTracer("relay");
  return std::unique_ptr<Tracer>(new Tracer(std::move(impl)));
}

Span Tracer::startMessage(std::string_view stream, std::string_view message_id,
                          const std::optional<TraceContext>& producer) {
  otel::trace::StartSpanOptions options;
  options.kind = otel::trace::SpanKind::kConsumer;
  if (producer) {
    options.parent = spanContextOf(*producer, true);
  } else {
    options.parent = otel::trace::SpanContext::GetInvalid();  // a new trace, not the thread's
  }
  Span span;
  span.impl_ = std::make_unique<Span::Impl>();
  span.impl_->span = impl_->tracer->StartSpan("receive " + std::string(stream), options);
  span.set("messaging.system", "redis");
  span.set("messaging.operation.type", "receive");
  span.set("messaging.destination.name", stream);
  span.set("messaging.message.id", message_id);
  return span;
}

Span Tracer::startAttempt(const Span& message, std::string_view message_id, std::string_view app,
                          std::string_view handler, int attempt, std::string_view trigger) {
  otel::trace::StartSpanOptions options;
  options.kind = otel::trace::SpanKind::kInternal;
  options.parent =
      message.impl_ ? message.impl_->span->GetContext() : otel::trace::SpanContext::GetInvalid();
  Span span;
  span.impl_ = std::make_unique<Span::Impl>();
  span.impl_->span =
      impl_->tracer->StartSpan("invoke " + std::string(app) + "/" + std::string(handler), options);
  span.set("messaging.message.id", message_id);
  span.set("relay.app", app);
  span.set("relay.handler", handler);
  span.set("relay.attempt", static_cast<std::int64_t>(attempt));
  span.set("relay.trigger", trigger);
  return span;
}

bool Tracer::flush(std::chrono::milliseconds timeout) {
  return impl_->provider->ForceFlush(
      std::chrono::duration_cast<std::chrono::microseconds>(timeout));
}

}  // namespace relay::tracing
