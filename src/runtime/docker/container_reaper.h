#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/docker/docker_api.h"

namespace relay::runtime::docker {

/// Label keys put on every container the docker runtime creates.
inline constexpr std::string_view kAppLabel = "relay.app";
inline constexpr std::string_view kInvocationLabel = "relay.invocation";
/// `<hostname>/<pid>/<start time in ns>` of the Relay process that created the container.
inline constexpr std::string_view kOwnerLabel = "relay.owner";
/// Wall-clock Unix milliseconds by which the container must be gone: its start plus the
/// handler's timeout, the kill grace and a margin. Whoever finds it later removes it.
inline constexpr std::string_view kDeadlineLabel = "relay.deadline";
/// On a prewarmed container (docs/runtimes.md "Prewarmed containers"): `true`.
inline constexpr std::string_view kPrewarmedLabel = "relay.prewarmed";

/// The kDeadlineLabel value for `deadline`.
std::string deadlineLabel(WallTime deadline);

/// The start of the name of every container that runs an attempt of `invocation_id`:
/// `relay-inv-<the first 32 hex digits of its SHA-256>-`. A cold container gets it when it is
/// created; a prewarmed one, whose labels were fixed before it knew its invocation, is renamed
/// to it before its hand-over, so reapInvocation() finds both.
std::string invocationNamePrefix(std::string_view invocation_id);

/// Removes the containers Relay processes left behind (docs/runtimes.md "docker"): earlier
/// attempts of an invocation about to run again, those of a crashed Relay on this host, and
/// any Relay container past its deadline, whoever made it. Thread-safe; each call blocks for
/// one list request and one removal per container.
class ContainerReaper {
 public:
  ContainerReaper(const DockerApi& api, Clock& clock, std::string owner, std::string hostname,
                  std::function<void(std::string_view)> warn);

  /// Containers whose owner label names this host and a process that no longer exists (or
  /// this very pid with another start time), plus every container past its deadline. For
  /// start-up. Returns how many were removed.
  Result<std::size_t> reapStale();
  /// Only the containers past their deadline, whatever their owner.
  Result<std::size_t> reapExpired();
  /// Every container of `invocation_id` (kInvocationLabel, or a name starting with
  /// invocationNamePrefix()), whoever made it: earlier attempts
  /// that a crashed or cut-off Relay left running. Called before an attempt's container is
  /// created, so two attempts of one invocation never overlap on a daemon. An Error when one
  /// could not be listed or removed.
  Result<std::size_t> reapInvocation(std::string_view invocation_id);
  /// reapExpired() when `interval` passed since the last call that ran it (by the monotonic
  /// clock); failures are warned, not returned. Cheap when not due.
  void reapExpiredEvery(std::chrono::milliseconds interval);

 private:
  Result<std::size_t> reap(bool dead_owners);
  /// Removes each of `ids`; the first failure, after trying them all.
  Result<std::size_t> removeAll(const std::vector<std::string>& ids);

  const DockerApi& api_;
  Clock& clock_;
  std::string owner_;
  std::string hostname_;
  std::function<void(std::string_view)> warn_;
  std::atomic<std::int64_t> next_expired_reap_ns_{0};
};

}  // namespace relay::runtime::docker
