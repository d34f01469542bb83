#pragma once

// relay-launcher's native sandbox (docs/runtimes.md "Native launcher"): the isolation of the
// bubblewrap path, built by relay-launcher itself, started as root by Relay, on a mount tree
// prepared once instead of rebuilt per invocation.

namespace relay::runtime::native {

/// Descriptor at which `--native` finds the prepared mount namespace (an nsfs descriptor of
/// the tree `--native-template` built); 3 is the seccomp program, 4 the status descriptor.
inline constexpr int kTemplateFd = 5;
/// The sandbox's host name, as bwrap --hostname sets it.
inline constexpr const char* kHostname = "relay-sandbox";

/// `relay-launcher --native-template <launcher> <system path>...`: makes a private mount
/// namespace whose root is a read-only tmpfs holding the system paths (recursive read-only,
/// nosuid, nodev binds), the host's top-level symlinks, a read-only minimal /dev, empty /proc,
/// /tmp and /app, and the launcher at /run/relay-launcher; writes "ready\n" on descriptor 3 and
/// waits for EOF on stdin. Relay keeps the namespace by its descriptor. Returns the exit code.
int buildTemplate(int argc, char** argv);

/// `relay-launcher --native <uid> <tmp bytes> <app dir> -- <command>...`: enters a copy of the
/// prepared tree in new mount, pid, network, ipc, uts and cgroup namespaces, mounts a fresh
/// /proc, a capped /tmp, devpts and the app read-only, and runs `command` as pid 2 under an init
/// as pid 1, as `uid` in a user namespace of its own with no capabilities, no_new_privs and
/// the seccomp program of descriptor 3. `command` being relay-launcher itself runs it in
/// process (no exec). Exits with the command's status, 128+N for a signal N, as bwrap does.
int runSandbox(int argc, char** argv, int (*launcher_main)(int, char**));

/// `relay-launcher --self-test <uid>`, run as the command of a native sandbox: exit 0 when the
/// isolation holds (unprivileged uid, no capabilities, no_new_privs, seccomp, own pid and
/// network namespaces, read-only root, app and /usr, writable /tmp, host name), else 1 with
/// what does not on stderr.
int selfTest(int argc, char** argv);

}  // namespace relay::runtime::native
