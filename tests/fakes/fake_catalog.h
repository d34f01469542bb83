#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "invocation/catalog.h"

namespace relay::testing {

/// A Catalog whose classification a test scripts (a function of the message and the time, so
/// `now()` windows and template edits are one line) and whose apps are a set of names with an
/// availability each. Thread-safe.
class FakeCatalog final : public invocation::Catalog {
 public:
  using Classify = std::function<invocation::Classification(const invocation::Message&, WallTime)>;

  void setClassify(Classify classify) {
    std::lock_guard lock(mutex_);
    classify_ = std::move(classify);
  }
  /// Every message gets `plan` (matched).
  void planAll(invocation::Plan plan) {
    setClassify([plan](const invocation::Message&, WallTime) {
      invocation::Classification what;
      what.kind = invocation::Classification::Kind::kPlan;
      what.plan = plan;
      return what;
    });
  }
  /// Adds (or updates) app `name` with these handlers.
  void app(const std::string& name, std::set<std::string> handlers, bool available = true,
           int concurrency = 4) {
    std::lock_guard lock(mutex_);
    apps_[name] = {std::move(handlers), available, concurrency};
  }
  void setAvailable(const std::string& name, bool available) {
    std::lock_guard lock(mutex_);
    apps_[name].available = available;
  }
  void removeApp(const std::string& name) {
    std::lock_guard lock(mutex_);
    apps_.erase(name);
  }
  /// Called at every resolve() (a test's hook into the moment before a claim).
  void onResolve(std::function<void()> hook) {
    std::lock_guard lock(mutex_);
    on_resolve_ = std::move(hook);
  }

  /// How many times classify() was called.
  int classifications() const {
    std::lock_guard lock(mutex_);
    return classifications_;
  }

  invocation::Classification classify(const invocation::Message& message, WallTime now) override {
    Classify classify;
    {
      std::lock_guard lock(mutex_);
      classify = classify_;
      ++classifications_;
    }
    if (classify) return classify(message, now);
    invocation::Classification unmatched;
    unmatched.kind = invocation::Classification::Kind::kUnmatched;
    return unmatched;
  }

  invocation::Runnable resolve(const invocation::PlannedInvocation& planned) override {
    std::function<void()> hook;
    invocation::Runnable runnable;
    {
      std::lock_guard lock(mutex_);
      hook = on_resolve_;
      auto app = apps_.find(planned.app);
      if (app == apps_.end() || !app->second.handlers.count(planned.handler)) {
        runnable.reason = "not loaded here";
      } else {
        runnable.known = true;
        runnable.available = app->second.available;
        runnable.reason = app->second.available ? "" : "fake: unavailable";
        runnable.concurrency = app->second.concurrency;
        runnable.spec.app = planned.app;
        runnable.spec.handler = planned.handler;
      }
    }
    if (hook) hook();
    return runnable;
  }

 private:
  struct App {
    std::set<std::string> handlers;
    bool available = true;
    int concurrency = 4;
  };
  mutable std::mutex mutex_;
  int classifications_ = 0;
  Classify classify_;
  std::map<std::string, App> apps_;
  std::function<void()> on_resolve_;
};

}  // namespace relay::testing
