#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/runtime.h"

namespace relay::testing {

/// A Runtime whose outcomes a test scripts per handler: a seam for pipeline tests that run
/// against a real Redis without real processes. Records every run. Thread-safe.
class FakeRuntime final : public runtime::Runtime {
 public:
  struct Run {
    std::string app;
    std::string handler;
    std::string message_id;
    int attempt = 0;
    runtime::Trigger trigger = runtime::Trigger::kEvent;
    std::string input;
    std::vector<std::pair<std::string, std::string>> env;  // the spec's app_env
  };

  std::string_view name() const override { return "fake"; }

  Result<runtime::Outcome> run(const runtime::InvocationSpec& spec,
                               runtime::OutputSink& output) override {
    std::unique_lock lock(mutex_);
    const std::string key = spec.app + "/" + spec.handler;
    if (unavailable_.count(key)) return Error::unavailable("fake: " + key + " unavailable");
    runs_.push_back({spec.app, spec.handler, spec.message_id, spec.attempt, spec.trigger,
                     std::string(spec.input), spec.app_env});
    lock.unlock();
    output.started();  // the handler started: from here on the attempt counts
    lock.lock();
    ++running_;
    most_running_ = std::max(most_running_, running_);
    changed_.notify_all();
    // A cancel (docs/pipeline.md "Cancellation") ends a blocked run at once, as a real runtime
    // stops its handler; the request is looked at every few milliseconds.
    const auto cancelled = [&spec] { return spec.cancel && spec.cancel->requested(); };
    while (!changed_.wait_for(lock, std::chrono::milliseconds(5), [&] {
      return !blocked_.count(key) || allowed_[key] > 0 || cancelled();
    })) {
    }
    const bool stopped = cancelled() && blocked_.count(key) && allowed_[key] <= 0;
    if (blocked_.count(key) && !stopped) --allowed_[key];
    --running_;
    ++finished_;
    changed_.notify_all();
    runtime::Outcome outcome;
    outcome.succeeded = true;
    if (stopped) {
      outcome.succeeded = false;
      outcome.cancelled = true;
      outcome.reason = "cancelled";
      return outcome;
    }
    auto& scripted = outcomes_[key];
    if (!scripted.empty()) {
      outcome.succeeded = scripted.front().empty();
      outcome.reason = scripted.front();
      if (scripted.size() > 1) scripted.pop_front();
    }
    lock.unlock();
    output.line("[" + key + "] ran attempt " + std::to_string(spec.attempt));
    return outcome;
  }

  runtime::Availability availability(const runtime::InvocationSpec& spec) const override {
    std::lock_guard lock(mutex_);
    const std::string key = spec.app + "/" + spec.handler;
    if (unavailable_.count(key)) return {false, "fake: " + key + " unavailable"};
    return {};
  }

  /// Every run of `key` (`app/handler`) from now on fails with `reason` ("" = success); the
  /// last scripted outcome repeats.
  void script(const std::string& key, std::vector<std::string> reasons) {
    std::lock_guard lock(mutex_);
    outcomes_[key] = std::deque<std::string>(reasons.begin(), reasons.end());
  }
  void failAlways(const std::string& key, const std::string& reason = "exit 1") {
    script(key, {reason});
  }
  void setUnavailable(const std::string& key, bool unavailable) {
    std::lock_guard lock(mutex_);
    if (unavailable) {
      unavailable_.insert(key);
    } else {
      unavailable_.erase(key);
    }
  }
  /// Runs of `key` block until unblock(key).
  void block(const std::string& key) {
    std::lock_guard lock(mutex_);
    blocked_.insert(key);
  }
  void unblock(const std::string& key) {
    std::lock_guard lock(mutex_);
    blocked_.erase(key);
    changed_.notify_all();
  }
  /// Lets `count` more blocked runs of `key` finish (it stays blocked for the others).
  void allow(const std::string& key, int count) {
    std::lock_guard lock(mutex_);
    allowed_[key] += count;
    changed_.notify_all();
  }
  /// Waits (bounded, real time) until `count` runs have finished in all.
  bool waitFinished(int count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return finished_ >= count; });
  }
  /// Waits (bounded, real time) until `count` runs are in progress.
  bool waitRunning(int count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return running_ >= count; });
  }

  /// The most runs that were in progress at once.
  int mostRunning() const {
    std::lock_guard lock(mutex_);
    return most_running_;
  }

  std::vector<Run> runs() const {
    std::lock_guard lock(mutex_);
    return runs_;
  }
  int runsOf(const std::string& key) const {
    std::lock_guard lock(mutex_);
    int count = 0;
    for (const Run& run : runs_) count += (run.app + "/" + run.handler) == key;
    return count;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::deque<std::string>> outcomes_;
  std::set<std::string> unavailable_;
  std::set<std::string> blocked_;
  std::vector<Run> runs_;
  std::map<std::string, int> allowed_;  // blocked runs let through by allow()
  int running_ = 0;
  int most_running_ = 0;
  int finished_ = 0;
};

}  // namespace relay::testing
