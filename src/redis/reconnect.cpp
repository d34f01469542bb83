#include "redis/reconnect.h"

#include <algorithm>
#include <utility>

namespace relay::redis {

Backoff::Backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap)
    : first_(first), cap_(std::max(cap, first)), wait_(first) {}

std::chrono::milliseconds Backoff::next() {
  const std::chrono::milliseconds now = wait_;
  // Doubling saturates at the cap instead of overflowing an uncapped wait.
  wait_ = wait_ > cap_ / 2 ? cap_ : wait_ * 2;
  return now;
}

Status reconnect(std::unique_ptr<Connection>& connection, const Endpoint& endpoint,
                 const ConnectionSettings& settings) {
  if (connection && connection->ok()) return {};
  auto created = Connection::create(endpoint, settings);
  if (!created.ok()) return created.error();
  connection = std::move(created).value();
  return {};
}

}  // namespace relay::redis
