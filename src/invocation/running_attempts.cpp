#include "invocation/running_attempts.h"

namespace relay::invocation {

RunningAttempts::Handle RunningAttempts::add(const std::string& id, const std::string& field,
                                             const std::string& token) {
  Key key{id, field, token};
  auto signal = std::make_shared<runtime::CancelSignal>();
  std::lock_guard lock(mutex_);
  if (cancelled_.count(key)) signal->request();
  running_[key] = signal;
  return Handle(*this, std::move(key), std::move(signal));
}

bool RunningAttempts::cancel(const std::string& id, const std::string& field,
                             const std::string& token) {
  Key key{id, field, token};
  std::lock_guard lock(mutex_);
  if (cancelled_.insert(key).second) {
    cancelled_order_.push_back(key);
    while (cancelled_order_.size() > remembered_) {
      cancelled_.erase(cancelled_order_.front());
      cancelled_order_.pop_front();
    }
  }
  auto found = running_.find(key);
  if (found == running_.end()) return false;
  found->second->request();
  return true;
}

std::size_t RunningAttempts::size() const {
  std::lock_guard lock(mutex_);
  return running_.size();
}

void RunningAttempts::remove(const Key& key) {
  std::lock_guard lock(mutex_);
  running_.erase(key);
}

}  // namespace relay::invocation
