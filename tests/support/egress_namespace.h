#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"
#include "common/unique_fd.h"

namespace relay::testing {

/// A non-loopback address this test controls, to prove outbound connectivity where there is no
/// internet: a network namespace joined to the host by a veth pair (host side 10.213.x.1,
/// namespace side 10.213.x.2, a /30 picked from the pid; a link-local /30 from 169.254.0.0/16
/// on the same pair, never 169.254.169.254) with a TCP listener on every address of the
/// namespace side that answers "egress-ok\n" to every connection. Needs root and iproute2
/// (`ip`). The destructor stops the listener and deletes the namespace and the veth pair.
class EgressNamespace {
 public:
  static Result<std::unique_ptr<EgressNamespace>> create();
  ~EgressNamespace();
  EgressNamespace(const EgressNamespace&) = delete;
  EgressNamespace& operator=(const EgressNamespace&) = delete;

  /// The listener's address, inside the namespace (e.g. 10.213.7.2).
  const std::string& address() const { return address_; }
  /// The listener's link-local address, inside the namespace (e.g. 169.254.7.2).
  const std::string& linkLocalAddress() const { return link_local_address_; }
  /// The host's end of the pair (e.g. 10.213.7.1): an address of the host itself.
  const std::string& hostAddress() const { return host_address_; }
  int port() const { return port_; }
  /// Connections the listener accepted so far.
  int accepted() const { return accepted_.load(); }

 private:
  EgressNamespace() = default;
  void serve();

  std::string name_;
  std::string host_link_;
  std::string address_;
  std::string link_local_address_;
  std::string host_address_;
  int port_ = 0;
  UniqueFd listener_;
  UniqueFd stop_read_;
  UniqueFd stop_write_;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

}  // namespace relay::testing
