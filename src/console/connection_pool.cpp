#include "console/connection_pool.h"

namespace relay::console {

namespace {
// More idle connections than request threads are never needed.
constexpr std::size_t kMaxIdle = 8;
}  // namespace

ConnectionPool::Lease::~Lease() {
  if (pool_ && connection_ && connection_->ok()) pool_->giveBack(std::move(connection_));
}

ConnectionPool::ConnectionPool(redis::Endpoint endpoint, redis::ConnectionSettings settings)
    : endpoint_(std::move(endpoint)), settings_(settings) {}

redis::Result<ConnectionPool::Lease> ConnectionPool::lease() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<redis::Connection> connection = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(connection));
    }
  }
  auto connection = redis::Connection::create(endpoint_, settings_);
  if (!connection.ok()) return connection.error();
  return Lease(*this, std::move(connection).value());
}

void ConnectionPool::giveBack(std::unique_ptr<redis::Connection> connection) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(connection));
}

}  // namespace relay::console
