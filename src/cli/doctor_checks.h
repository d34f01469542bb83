#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "config/config.h"

namespace relay::cli {

/// One verdict of `relay doctor` (docs/deployment.md "relay doctor").
struct DoctorCheck {
  enum class Status { kOk, kWarn, kFail, kSkip };
  std::string name;
  Status status = Status::kOk;
  std::string detail;  // what was found
  std::string fix;     // the one change that makes it work; empty unless warn or fail
};

/// "ok", "warn", "fail", "skip".
const char* statusName(DoctorCheck::Status status);

/// Every layer the configured runtime needs on this host, then Redis: for the sandbox, bwrap,
/// user namespaces, a fresh /proc, the seccomp filter, cgroups (writable, or through Relay's
/// view), pasta and /dev/net/tun (a failure only when an app asks for network: true), then the
/// sandbox started for real as `relay start` would; for docker, the daemon; then the apps root,
/// Redis reachable, its version, and every command Relay uses tried on keys of Relay's own
/// (`relay:<stream>:doctor:*`, removed after), so an ACL user without one is named with the
/// rule that fixes it. Each check is independent: a missing layer does not hide the others.
/// Blocks for short child processes and Redis round trips; changes this process's namespaces
/// as `relay start` would (the sandbox's writable cgroup view), so call it last.
std::vector<DoctorCheck> runDoctorChecks(const config::WorkerConfig& config, Clock& clock);

/// The commands Relay sends to Redis (docs/operations.md "An ACL user for Relay").
const std::vector<std::string>& relayRedisCommands();

}  // namespace relay::cli
