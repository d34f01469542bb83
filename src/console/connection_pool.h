#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "redis/connection.h"
#include "redis/endpoint.h"

namespace relay::console {

/// Redis connections for the console's request threads: lease() hands out an idle one (or
/// connects a new one); the lease gives it back when it ends, unless it broke. Thread-safe.
class ConnectionPool {
 public:
  /// A connection borrowed for one request.
  class Lease {
   public:
    Lease(ConnectionPool& pool, std::unique_ptr<redis::Connection> connection)
        : pool_(&pool), connection_(std::move(connection)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    redis::Connection& operator*() const { return *connection_; }
    redis::Connection* operator->() const { return connection_.get(); }

   private:
    ConnectionPool* pool_;
    std::unique_ptr<redis::Connection> connection_;
  };

  explicit ConnectionPool(redis::Endpoint endpoint, redis::ConnectionSettings settings = {});

  /// Blocks for a connect when no idle connection is left.
  redis::Result<Lease> lease();

 private:
  void giveBack(std::unique_ptr<redis::Connection> connection);

  redis::Endpoint endpoint_;
  redis::ConnectionSettings settings_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<redis::Connection>> idle_;
};

}  // namespace relay::console
