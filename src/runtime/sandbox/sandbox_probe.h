#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/sandbox/bwrap_command.h"
#include "runtime/sandbox/native_sandbox.h"
#include "runtime/sandbox/seccomp_filter.h"

namespace relay::runtime {

// One-off checks the sandbox runtime makes when it is created, so that a host where the
// sandbox cannot work makes apps unavailable with the reason instead of failing each
// invocation as if the handler had failed. Each blocks for one short child process.

/// Whether `bwrap --help` lists `option` (e.g. --disable-userns, bwrap 0.8+).
bool bwrapSupports(const std::string& bwrap, std::string_view option, Clock& clock);

/// Starts one sandbox with the real options (seccomp filter included) running /usr/bin/true, or,
/// given `launcher`, that relay-launcher bound as in every sandbox (with no hand-over it exits
/// 0), with its own network through pasta, filtered by `egress`, when `network`. kUnavailable
/// with bwrap's (or pasta's, or relay-launcher's) own message when it cannot: no unprivileged
/// user namespaces, no seccomp, an option this bwrap lacks, no /dev/net/tun for pasta, a
/// launcher the sandbox user cannot run, a kernel without nf_tables.
Status probeSandbox(const SandboxSettings& settings, const SandboxTools& tools,
                    const SeccompFilter& seccomp, Clock& clock, bool network = false,
                    const std::string& launcher = "", const EgressPolicy& egress = {});

/// Starts one native sandbox (docs/runtimes.md "Native launcher") running relay-launcher's
/// self-test, the isolation checked from inside, as Relay's own probe id. kUnavailable with
/// what does not hold.
Status probeNative(const SandboxSettings& settings, const std::string& launcher,
                   const NativeTemplate& tree, const SeccompFilter& seccomp, Clock& clock);

/// Whether the mode of `info` grants `access` (a mask of 4 read, 2 write, 1 search or execute)
/// to a process of `uid` and `gid` without supplementary groups (the sandbox user), as the
/// kernel decides when no ACL is set: the owner's bits for the owner, else the group's for the
/// group, else the others'.
bool modeGrants(const struct stat& info, uid_t uid, gid_t gid, unsigned access);

/// Why `uid`/`gid` (the sandbox user, no supplementary groups) cannot open the tun device at
/// `path` read-write, as pasta must for a network: true sandbox; empty when its mode allows it.
/// Said after a failed network probe, whose own message ("Failed to open tun socket") names
/// no cause. Judged by the mode bits alone: an ACL granting access is not seen.
std::string tunAccessProblem(const std::string& path, uid_t uid, gid_t gid);

}  // namespace relay::runtime
