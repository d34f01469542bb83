#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "observability/logger.h"
#include "runtime/runtime.h"

namespace relay::invocation {

/// The lifecycle's OutputSink: forwards every handler line to the log verbatim (whatever the
/// level) and keeps the last `limit` bytes of them, prefixed lines as logged, for the state hash
/// and the DLQ entry of a failed attempt. One per attempt; used from the running thread only.
class OutputTail final : public runtime::OutputSink {
 public:
  static constexpr std::size_t kDefaultLimit = 4096;

  explicit OutputTail(observability::Logger& logger, std::size_t limit = kDefaultLimit)
      : logger_(logger), limit_(limit) {}

  void line(std::string_view prefixed_line) override;
  /// Calls `on_started` the first time the runtime says the handler started.
  void onStarted(std::function<void()> on_started) { on_started_ = std::move(on_started); }
  void started() override;
  bool hasStarted() const { return started_; }
  /// The kept lines joined by `\n`, at most `limit` bytes (a longer last line keeps its end).
  std::string text() const;
  /// Lines that start with `prefix` (the handler's, as the runtime adds it) are read for a
  /// retry-after request too (retry_after.h): retryAfter() is the last one's delay.
  void watchRetryAfter(std::string prefix) { retry_after_prefix_ = std::move(prefix); }
  std::optional<std::chrono::milliseconds> retryAfter() const { return retry_after_; }

 private:
  observability::Logger& logger_;
  std::size_t limit_;
  std::deque<std::string> lines_;
  std::size_t bytes_ = 0;  // sum of the kept lines' sizes plus one separator each
  std::function<void()> on_started_;
  bool started_ = false;
  std::string retry_after_prefix_;
  std::optional<std::chrono::milliseconds> retry_after_;
};

}  // namespace relay::invocation
