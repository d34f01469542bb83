#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/runtime.h"

namespace relay::runtime {

/// A sandbox started ahead of demand for exactly one invocation, waiting for its hand-over.
/// Backend-specific; destroying one that was never handed over ends it and everything in it.
class WarmSandbox {
 public:
  virtual ~WarmSandbox() = default;
  /// Still waiting: not died meanwhile.
  virtual bool alive() const = 0;

  /// When the pool got it ready (set by the pool; PrewarmSettings::max_age).
  MonoTime ready_since{};
};

/// Fixed internals of the prewarm pool; tests shorten them through this struct.
struct PrewarmSettings {
  std::size_t max_per_shape = 4;                 // ready sandboxes of one app and shape at most
  std::size_t max_total = 16;                    // all together (MAX_CONCURRENCY)
  std::chrono::milliseconds window{10'000};      // arrivals are counted over this window
  std::chrono::milliseconds idle_after{30'000};  // no arrival for this long: keep none
  std::chrono::milliseconds tick{100};           // the warmer's pace while anything is warm
  /// A ready sandbox older than this is ended and replaced; 0: kept as long as its shape is
  /// wanted. (A docker container's deadline label must cover its wait: docs/runtimes.md.)
  std::chrono::milliseconds max_age{0};
  bool background = true;  // startWarmer() starts the threads; false: only maintain() calls
};

/// relay-launcher: `configured`, else the one beside the running executable; empty when it is not
/// an executable file there (then nothing is prewarmed).
std::string findLauncher(const std::string& configured);

/// What of an invocation decides how its sandbox is built: the app, its directory, language,
/// network, resources, image and env (a prewarmed interpreter starts with it). Per-invocation parts
/// (environment, stdin, timeout) are handed over later and are not in it.
std::string sandboxShape(const InvocationSpec& spec);

/// Prewarmed one-shot sandboxes per app and shape (docs/runtimes.md "Prewarmed sandboxes").
/// take() hands out a ready one, or nothing (the caller starts cold); maintain() adapts each
/// shape's stock to its arrival rate: one for the next arrival plus the arrivals expected while
/// one more starts (rate over the window x the measured start cost), at most max_per_shape, and
/// none once the shape was idle for idle_after (measured with the injected Clock). Each sandbox
/// serves exactly one invocation. Thread-safe.
class PrewarmPool {
 public:
  using Starter = std::function<Result<std::unique_ptr<WarmSandbox>>(const InvocationSpec&)>;

  PrewarmPool(PrewarmSettings settings, Clock& clock, Starter starter);
  /// Stops the warmer and drops every ready sandbox.
  ~PrewarmPool();
  PrewarmPool(const PrewarmPool&) = delete;
  PrewarmPool& operator=(const PrewarmPool&) = delete;

  /// A ready sandbox of spec's app and shape, or nullptr. Records the arrival and wakes the
  /// warmer. A sandbox that died while waiting is dropped, never handed out.
  std::unique_ptr<WarmSandbox> take(const InvocationSpec& spec);
  /// Drops every ready sandbox of `app` and forgets its arrivals (its template or files
  /// changed: the next sandboxes are built from the new ones).
  void forget(const std::string& app);
  /// One pass: drops idle shapes and surplus sandboxes, starts what the targets ask for (on the
  /// calling thread). Returns how many it started.
  std::size_t maintain();
  /// Runs maintain() on a thread of its own after every take() and every tick (a second thread
  /// that sleeps on the Clock) while any shape is known; with none it waits for the next take()
  /// without waking up.
  void startWarmer();

  std::size_t ready(const std::string& app) const;
  std::size_t readyTotal() const;
  /// What maintain() currently aims for, for spec's app and shape.
  std::size_t target(const InvocationSpec& spec) const;

 private:
  struct Shape {
    std::string app;
    InvocationSpec spec;  // what sandboxes of this shape are started from (no input)
    std::deque<MonoTime> arrivals;
    MonoTime last_arrival{};
    std::vector<std::unique_ptr<WarmSandbox>> ready;
    std::size_t starting = 0;
  };

  std::size_t targetLocked(const Shape& shape, MonoTime now) const;
  std::size_t totalLocked() const;
  void warmerLoop();
  void tickerLoop();

  const PrewarmSettings settings_;
  Clock& clock_;
  const Starter starter_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, Shape> shapes_;     // by app + shape
  std::chrono::nanoseconds start_cost_{0};  // moving average; 0 until the first start
  bool stopping_ = false;
  bool asked_ = false;  // a take() since the warmer last looked
  std::thread warmer_;
  std::thread ticker_;
};

}  // namespace relay::runtime
