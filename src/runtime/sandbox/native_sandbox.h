#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/sandbox_settings.h"

namespace relay::runtime {

// The native launcher (docs/runtimes.md "Native launcher"): relay-launcher builds the sandbox
// itself on a mount tree prepared once, instead of bwrap rebuilding it per invocation.

std::string_view sandboxLauncherName(SandboxLauncher launcher);
std::optional<SandboxLauncher> sandboxLauncherFromName(std::string_view name);

/// Whether the native launcher builds spec's sandbox when it is chosen: not for `network:
/// true` (pasta and the egress filter stay bwrap's) nor an image root; those keep bwrap.
bool nativeBuilds(const InvocationSpec& spec);

/// The prepared read-only tree, kept as a mount namespace descriptor: made once by
/// `relay-launcher --native-template` (as root), entered and copied by every native sandbox.
class NativeTemplate {
 public:
  /// Builds the tree of `settings.system_paths`, the host's top-level links, a minimal /dev
  /// and `launcher` at /run/relay-launcher. kUnavailable with the launcher's reason. Blocks up
  /// to 10 s.
  static Result<std::unique_ptr<NativeTemplate>> create(const SandboxSettings& settings,
                                                        const std::string& launcher);
  /// The nsfs descriptor of the prepared mount namespace (close-on-exec).
  int fd() const { return ns_.get(); }

 private:
  explicit NativeTemplate(UniqueFd ns) : ns_(std::move(ns)) {}
  UniqueFd ns_;
};

/// relay-launcher's argv for one native sandbox running `command` as `id` (the uid the
/// bwrap path gives the app), the app at /app.
std::vector<std::string> nativeArgv(const SandboxSettings& settings, const std::string& launcher,
                                    const InvocationSpec& spec, uid_t id,
                                    std::vector<std::string> command);

}  // namespace relay::runtime
