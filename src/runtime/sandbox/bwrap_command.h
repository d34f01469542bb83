#pragma once

#include <string>
#include <vector>

#include "runtime/runtime.h"
#include "runtime/sandbox/sandbox_settings.h"

namespace relay::runtime {

/// What the host's tools offer, found once when the sandbox runtime is created.
struct SandboxTools {
  std::string bwrap = "bwrap";        // absolute path once found
  bool bwrap_disable_userns = false;  // bwrap 0.8+: --disable-userns
};

/// Descriptor number at which bwrap finds the seccomp program (LaunchOptions::inherited_fds).
inline constexpr int kSeccompFd = 3;

/// The complete argv of one sandboxed invocation: bwrap with every isolation option of
/// docs/runtimes.md, then `--` and the handler command. Pure: reads the host's top-level
/// symlinks (/bin -> usr/bin) but starts nothing.
std::vector<std::string> bwrapArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                   const InvocationSpec& spec);

}  // namespace relay::runtime
