#pragma once

#include <mutex>
#include <string>

namespace relay::redis {

/// What the connections of one endpoint have seen, shared by all of them: the master they last
/// reached, and how often a connection was replaced or the master moved (for the
/// relay_redis_reconnects_total and relay_redis_failovers_total metrics). Thread-safe.
class Topology {
 public:
  struct Counts {
    long long reconnects = 0;  // connections made to replace broken ones, and redirects followed
    long long failovers = 0;   // times the master changed (sentinel failover, cluster slot move)
  };

  /// A connection broke (I/O error, timeout, or a reply such as READONLY that means it talks
  /// to the wrong server); the next connection made replaces it.
  void connectionBroke();
  /// A connection reached the master `address` (Address::describe()). Counts a reconnect when
  /// it replaces a broken connection and a failover when the master is not the one seen last.
  void connectedTo(const std::string& address);
  /// A live connection followed a MOVED redirect to `address`: a reconnect, and a failover when
  /// the master changed.
  void redirectedTo(const std::string& address);

  Counts counts() const;
  /// The master last reached; empty before the first connection.
  std::string master() const;

 private:
  void reached(const std::string& address);  // mutex_ held

  mutable std::mutex mutex_;
  std::string master_;
  long long unreplaced_breaks_ = 0;
  Counts counts_;
};

}  // namespace relay::redis
