#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "runtime/runtime.h"

namespace relay::runtime::docker {

/// DOCKER_HOST when the variable is unset.
inline constexpr std::string_view kDefaultDockerHost = "unix:///var/run/docker.sock";

/// The socket path of a `unix://` DOCKER_HOST. Other schemes (tcp://, ssh://, npipe://) are
/// rejected (kInvalidArgument) because Relay only speaks to a local daemon.
Result<std::string> socketPathFromDockerHost(std::string_view docker_host);

/// The image used when an app names none, per language (tests substitute their own).
struct DefaultImages {
  std::string exec = std::string(defaultImage(Language::kExec));
  std::string python3 = std::string(defaultImage(Language::kPython3));
  std::string node = std::string(defaultImage(Language::kNode));

  const std::string& forLanguage(Language language) const;
};

/// spec.image, or the default for its language.
const std::string& imageFor(const InvocationSpec& spec, const DefaultImages& defaults);

/// What the runtime adds to a container besides the invocation itself.
struct ContainerOptions {
  std::string image;
  std::vector<std::pair<std::string, std::string>> labels;
  std::string tmpfs_options = "rw,noexec,nosuid,size=64m";
  /// Runs docker-init as PID 1 so the handler gets default signal dispositions (a SIGTERM on
  /// timeout ends it) and orphans are reaped, as in the sandbox.
  bool init = true;
  /// A prewarmed container (docs/runtimes.md "Prewarmed containers") starts with this command
  /// and environment instead of the invocation's, and waits for its hand-over.
  std::optional<std::vector<std::string>> command;
  std::optional<std::vector<std::string>> env;
  /// relay-launcher on the daemon's host, bound read-only at kLauncherMount; empty: none.
  std::string launcher;
  /// The uid and gid (the same number) the handler runs as: the app's own (docs/runtimes.md
  /// "Identities"), so per-user kernel limits are not shared between apps.
  uid_t user = 65534;
};

/// The JSON body of POST /containers/create for one invocation: the handler command and
/// environment, /app bound read-only, and the hardening and limits of docs/runtimes.md "docker".
/// The body carries the environment, which may hold secrets: it must never be logged.
std::string containerCreateBody(const InvocationSpec& spec, const ContainerOptions& options);

/// Percent-encodes `text` for a URL path segment or query value; `/` is kept when asked (image
/// names such as `library/python:3.12` are routed whole by the daemon).
std::string percentEncode(std::string_view text, bool keep_slash = false);

}  // namespace relay::runtime::docker
