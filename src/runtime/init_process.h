#pragma once

#include <string>
#include <vector>

namespace relay::runtime {

/// When this process is PID 1 (the init of a container or of a pid namespace), makes Relay its
/// own init: forks, the child returns and runs Relay as usual, and the parent stays PID 1 for
/// good, reaping every process the namespace orphans to it (the init of a sandbox whose bwrap
/// was killed, a handler's escaped daemon), forwarding SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1
/// and SIGUSR2 to the child and exiting with the child's status (128 + N for signal N). The
/// child's own waits (ChildProcess) are never disturbed: it is not PID 1 and its orphans are not
/// its to reap. Returns at once, doing nothing, when not PID 1 or when the fork fails. Call
/// first thing in main(), before any thread starts (docs/operations.md "Relay as PID 1").
void becomeInitIfPid1();

/// The mount points below `/proc/` in a mounts file's text (`/proc/self/mounts` format), the
/// last mounted first: what a container runtime put over parts of /proc (Docker's masked and
/// read-only paths), in the order they can be detached.
std::vector<std::string> mountsBelowProc(const std::string& mounts_text);

/// Called by becomeInitIfPid1 before it forks Relay. docker-compose 1.x cannot pass `--security-opt
/// systempaths=unconfined`, so a container of it has a masked /proc, where the kernel refuses a
/// sandbox a fresh one (docs/deployment.md "Docker Compose"). Such a container may give PID 1
/// CAP_SYS_ADMIN and CAP_SETPCAP instead: PID 1 then detaches every mount below /proc, drops
/// both capabilities from its bounding set and from its own sets, and only then forks Relay, so
/// neither Relay nor any handler ever holds them. Does nothing without CAP_SYS_ADMIN. Returns
/// a line for Relay's log ("" when nothing was done).
std::string unmaskProcAndShedSysAdmin();

}  // namespace relay::runtime
