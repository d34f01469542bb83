#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "observability/logger.h"
#include "tracing/trace_context.h"
#include "tracing/tracing_config.h"

namespace relay::tracing {

/// One started span (a handle; the OpenTelemetry types stay in tracer.cpp). Ended by end() or
/// at destruction. Move-only; not thread-safe (a span belongs to the thread that runs it).
class Span {
 public:
  Span();
  ~Span();
  Span(Span&&) noexcept;
  Span& operator=(Span&&) noexcept;

  void set(std::string_view key, std::string_view value);
  void set(std::string_view key, std::int64_t value);
  /// Marks the span failed (status Error) with `reason`.
  void fail(std::string_view reason);
  /// This span as the parent of the next hop: its trace id, its own span id as the parent id,
  /// its sampling flag and the trace's tracestate. What a handler gets as TRACEPARENT.
  TraceContext context() const;
  void end();
  /// False for a default-constructed or moved-from span.
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  friend class Tracer;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Exports Relay's spans with OTLP/HTTP through opentelemetry-cpp (docs/tracing.md): a span per
/// delivered message (receive and classify) continuing the producer's trace, and a span per
/// invocation attempt under it. Owns its tracer provider (no global OpenTelemetry state but the
/// SDK's internal log handler, which it points at the Relay logger while it lives). Spans are
/// batched on the SDK's thread; the destructor flushes what is left. Thread-safe.
class Tracer {
 public:
  /// Fails (kInvalidArgument) only on settings the SDK refuses; an unreachable collector is not
  /// an error (exports fail later, logged at debug level, never touching the pipeline).
  static Result<std::unique_ptr<Tracer>> create(const TracingConfig& config,
                                                observability::Logger& logger);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// The span of one delivery of `message_id` from `stream`: a consumer span, child of the
  /// producer's context when there is one, else the root of a new trace.
  Span startMessage(std::string_view stream, std::string_view message_id,
                    const std::optional<TraceContext>& producer);
  /// The span of one handler attempt, child of its message's span.
  Span startAttempt(const Span& message, std::string_view message_id, std::string_view app,
                    std::string_view handler, int attempt, std::string_view trigger);

  /// Exports every finished span now; false when that did not finish within `timeout`.
  bool flush(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  explicit Tracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace relay::tracing
