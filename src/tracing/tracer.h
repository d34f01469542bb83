#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "observability/logger.h"
#include "tracing/trace_context.h"
#include "tracing/tracing_config.h"

namespace relay::tracing {

/// What a started span does; implemented over opentelemetry-cpp in the tracing module
/// (otel_tracer.cpp). Not thread-safe: a span belongs to the thread that runs it.
class SpanBackend {
 public:
  virtual ~SpanBackend() = default;
  virtual void set(std::string_view key, std::string_view value) = 0;
  virtual void set(std::string_view key, std::int64_t value) = 0;
  virtual void fail(std::string_view reason) = 0;
  virtual TraceContext context() const = 0;
  virtual void end() = 0;
};

/// One started span (a handle; the OpenTelemetry types stay in the module). Ended by end() or
/// at destruction. Move-only; not thread-safe. Header-only, so that the module and the binary
/// share it without the binary linking OpenTelemetry.
class Span {
 public:
  Span() = default;
  explicit Span(std::unique_ptr<SpanBackend> backend) : backend_(std::move(backend)) {}
  ~Span() { end(); }
  Span(Span&&) noexcept = default;
  Span& operator=(Span&& other) noexcept {
    if (this != &other) {
      end();
      backend_ = std::move(other.backend_);
      ended_ = other.ended_;
    }
    return *this;
  }

  void set(std::string_view key, std::string_view value) {
    if (backend_) backend_->set(key, value);
  }
  void set(std::string_view key, std::int64_t value) {
    if (backend_) backend_->set(key, value);
  }
  /// Marks the span failed (status Error) with `reason`.
  void fail(std::string_view reason) {
    if (backend_) backend_->fail(reason);
  }
  /// This span as the parent of the next hop: its trace id, its own span id as the parent id,
  /// its sampling flag and the trace's tracestate. What a handler gets as TRACEPARENT.
  TraceContext context() const { return backend_ ? backend_->context() : TraceContext(); }
  void end() {
    if (backend_ && !ended_) {
      ended_ = true;
      backend_->end();
    }
  }
  /// False for a default-constructed or moved-from span.
  explicit operator bool() const { return backend_ != nullptr; }
  /// For the tracer that started it (the parent of an attempt).
  const SpanBackend* backend() const { return backend_.get(); }

 private:
  std::unique_ptr<SpanBackend> backend_;
  bool ended_ = false;
};

/// Exports Relay's spans with OTLP/HTTP (docs/tracing.md): a span per delivered message
/// (receive and classify) continuing the producer's trace, and a span per invocation attempt
/// under it. Thread-safe. The implementation over opentelemetry-cpp lives in a module
/// (`relay-otel.so`, next to the `relay` binary) loaded only when tracing is configured: with
/// OTEL_* unset, relay neither loads nor needs the OpenTelemetry libraries.
class Tracer {
 public:
  virtual ~Tracer() = default;

  /// Loads the module at `module` and starts its tracer provider (spans batched on the SDK's
  /// thread; the SDK's diagnostics go to `logger`; the destructor flushes what is left). Fails
  /// (kUnavailable) when the module or its libraries cannot be loaded, naming the path and the
  /// loader's reason, and (kInvalidArgument) on settings the SDK refuses. An unreachable
  /// collector is not an error: exports fail later, logged, never touching the pipeline.
  static Result<std::unique_ptr<Tracer>> load(const TracingConfig& config,
                                              observability::Logger& logger,
                                              const std::filesystem::path& module);
  /// `relay-otel.so` in the directory of the running executable.
  static std::filesystem::path defaultModule();

  /// The span of one delivery of `message_id` from `stream`: a consumer span, child of the
  /// producer's context when there is one, else the root of a new trace.
  virtual Span startMessage(std::string_view stream, std::string_view message_id,
                            const std::optional<TraceContext>& producer) = 0;
  /// The span of one handler attempt, child of its message's span.
  virtual Span startAttempt(const Span& message, std::string_view message_id, std::string_view app,
                            std::string_view handler, int attempt, std::string_view trigger) = 0;
  /// Exports every finished span now; false when that did not finish within `timeout`.
  virtual bool flush(std::chrono::milliseconds timeout) = 0;
};

/// The module's diagnostics sink: `warning` for failed exports and the like, else debug detail.
using TracerLog = std::function<void(bool warning, std::string_view detail)>;

/// The module's one entry point (`relay_otel_create_tracer`): a new tracer, or null with
/// `*error` set. The binary owns the result.
using CreateTracerFunction = Tracer* (*)(const TracingConfig& config, const TracerLog& log,
                                         std::string* error);
inline constexpr const char* kCreateTracerSymbol = "relay_otel_create_tracer";

}  // namespace relay::tracing
