#pragma once

#include <atomic>

#include "common/unique_fd.h"

namespace relay::runtime {

/// A request to stop one running handler now (docs/pipeline.md "Cancellation"): the runtime
/// that runs it watches fd() beside the handler's pipes and, once it is readable, stops the
/// handler as a timeout would (SIGTERM to the whole tree or container, SIGKILL after the kill
/// grace) and reports the outcome as cancelled. request() may come from any thread, before the
/// handler started or while it runs; a handler that already ended is unaffected.
class CancelSignal {
 public:
  CancelSignal();
  CancelSignal(const CancelSignal&) = delete;
  CancelSignal& operator=(const CancelSignal&) = delete;

  /// Asks for the stop. Thread-safe, idempotent, never blocks.
  void request();
  bool requested() const { return requested_.load(); }
  /// Readable once request() was called; -1 when the kernel refused an eventfd (then the
  /// runtimes look at requested() at least every 100 ms).
  int fd() const { return fd_.get(); }

 private:
  std::atomic<bool> requested_{false};
  UniqueFd fd_;
};

}  // namespace relay::runtime
