#pragma once

#include <string>
#include <vector>

#include "runtime/egress_policy.h"
#include "runtime/handover.h"
#include "runtime/image/image_root.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/sandbox_settings.h"

namespace relay::runtime {

/// What the host's tools offer, found once when the sandbox runtime is created.
struct SandboxTools {
  std::string bwrap = "bwrap";        // absolute path once found
  bool bwrap_disable_userns = false;  // bwrap 0.8+: --disable-userns
  std::string pasta;                  // passt's pasta; empty: `network: true` cannot run
  std::string launcher;               // relay-launcher: installs a network sandbox's egress filter
  /// util-linux's unshare: between pasta and bwrap it mounts a /proc of pasta's pid namespace
  /// (networkPrefix); empty: bwrap runs right under pasta.
  std::string unshare;
};

/// Descriptor number at which bwrap finds the seccomp program (LaunchOptions::inherited_fds).
inline constexpr int kSeccompFd = 3;
/// Where the app directory is mounted (read-only) inside the sandbox.
inline constexpr const char* kAppMount = "/app";

/// bwrap with every isolation option of docs/runtimes.md, then `--` and the handler command,
/// as uid and gid `id` inside (the sandbox runs as `id` outside too: the app's, see
/// SandboxIdentities). With spec.network bwrap keeps the network namespace it starts in
/// (--share-net): run it under networkPrefix(). Pure: reads the host's top-level symlinks
/// (/bin -> usr/bin), starts nothing.
std::vector<std::string> bwrapArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                   const InvocationSpec& spec, uid_t id);
/// The same running `command` instead, with `extra` bwrap options before the `--` (a
/// prewarmed sandbox's launcher bind). With `image`, the sandbox's root is that image's instead
/// of the host's system paths (docs/runtimes.md "Image roots"): its top-level directories bound
/// read-only, its top-level symlinks mirrored, all else as without it.
std::vector<std::string> bwrapArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                   const InvocationSpec& spec, uid_t id,
                                   const std::vector<std::string>& extra,
                                   std::vector<std::string> command,
                                   const image::ImageRoot* image = nullptr);

/// pasta's command line, then (with tools.unshare) `unshare --mount-proc`, then
/// relay-launcher's egress step, up to bwrap: pasta runs the command after it in a new user and
/// network namespace of its own whose traffic it forwards through sockets on the host, so a
/// `network: true` handler reaches the outside world but never the host's network namespace:
/// no port forwarding either way, no mapping of the gateway address to the host's loopback.
/// pasta also starts its command in a new pid namespace but leaves /proc as it was, where bwrap
/// looks up its child's namespaces by that pid: in a container's /proc that pid is missing and
/// bwrap fails ("open /proc/2/ns"), on a host it names another process. So `unshare
/// --mount-proc` comes next: a mount namespace of pasta's with a /proc of pasta's pid
/// namespace. relay-launcher, still holding pasta's namespace capabilities, installs `egress`
/// in the namespace (egress_filter.h) and execs bwrap, which drops them for the handler.
std::vector<std::string> networkPrefix(const SandboxTools& tools, const EgressPolicy& egress);

/// The complete argv of one sandboxed invocation: bwrapArgv, under networkPrefix(egress) when
/// spec.network. argv[0] is the executable to start.
std::vector<std::string> sandboxArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                     const InvocationSpec& spec, uid_t id,
                                     const EgressPolicy& egress = {});
/// The same running `command` (with `extra` bwrap options, on `image`'s root), as bwrapArgv's
/// overload.
std::vector<std::string> sandboxArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                     const InvocationSpec& spec, uid_t id,
                                     const std::vector<std::string>& extra,
                                     std::vector<std::string> command,
                                     const EgressPolicy& egress = {},
                                     const image::ImageRoot* image = nullptr);

}  // namespace relay::runtime
