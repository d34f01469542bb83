#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "runtime/cancel_signal.h"

namespace relay::invocation {

/// The attempts that run on this worker, each with the CancelSignal its runtime watches, so
/// that a cancellation read from Redis (the cancels stream, docs/pipeline.md "Cancellation")
/// stops the handler wherever it runs. A cancellation may arrive between the claim and the
/// registration of its attempt: the last `remembered` cancelled claims are kept, and an attempt
/// registered under one of them starts cancelled. Thread-safe.
class RunningAttempts {
 public:
  using Key = std::tuple<std::string, std::string, std::string>;  // message id, field, token

  explicit RunningAttempts(std::size_t remembered = 4096) : remembered_(remembered) {}

  /// An attempt registered for as long as it lives; its signal() is what the runtime watches.
  class Handle {
   public:
    Handle(RunningAttempts& owner, Key key, std::shared_ptr<runtime::CancelSignal> signal)
        : owner_(&owner), key_(std::move(key)), signal_(std::move(signal)) {}
    Handle(Handle&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)),
          key_(std::move(other.key_)),
          signal_(std::move(other.signal_)) {}
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle& operator=(Handle&&) = delete;
    ~Handle() {
      if (owner_) owner_->remove(key_);
    }
    const runtime::CancelSignal& signal() const { return *signal_; }

   private:
    RunningAttempts* owner_;
    Key key_;
    std::shared_ptr<runtime::CancelSignal> signal_;
  };

  /// Registers the attempt of `token` on invocation `field` of message `id`.
  Handle add(const std::string& id, const std::string& field, const std::string& token);
  /// Stops that attempt if it runs here (true); otherwise remembers the claim, in case its
  /// attempt registers after this call (false).
  bool cancel(const std::string& id, const std::string& field, const std::string& token);
  std::size_t size() const;

 private:
  void remove(const Key& key);

  const std::size_t remembered_;
  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<runtime::CancelSignal>> running_;
  std::set<Key> cancelled_;
  std::deque<Key> cancelled_order_;
};

}  // namespace relay::invocation
