#pragma once

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

}  // namespace relay::runtime
