#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/runtime.h"

namespace relay::config {

/// The isolation backends RELAY_RUNTIME and `--runtime` name (docs/runtimes.md).
enum class Backend { kSandbox, kDocker, kProcess };

/// `sandbox`, `docker` or `process`.
std::string_view backendName(Backend backend);

/// The backend `name` names; nullopt for anything else (kExpectedBackend says what is valid).
std::optional<Backend> backendFromName(std::string_view name);

/// What a bad RELAY_RUNTIME or `--runtime` value is told.
inline constexpr std::string_view kExpectedBackend = "expected sandbox, docker or process";

/// Builds `backend`. A backend that cannot work on this host is still returned: it reports
/// every app unavailable with the reason. Fails only for a malformed DOCKER_HOST. Contacts no
/// daemon and removes nothing: a worker reaps what a crashed Relay left (Runtime::reapStale())
/// itself. `warn` receives secondary failures (default: none reported). `max_concurrency` is
/// MAX_CONCURRENCY (the sandbox's CPU weight, and the most prewarmed sandboxes kept).
/// `prewarm`: the sandbox keeps prewarmed sandboxes, docker prewarmed containers (docs/runtimes.md
/// "Prewarmed sandboxes", "Prewarmed containers"); only the worker asks, a one-shot command would
/// start one for nothing.
Result<std::unique_ptr<runtime::Runtime>> makeRuntime(
    Backend backend, Clock& clock, const std::string& docker_host,
    std::function<void(std::string_view)> warn = {}, int max_concurrency = 16,
    bool prewarm = false);

struct RuntimeConfig;
/// The same for a whole RuntimeConfig (its backend, DOCKER_HOST and the sandbox's image cache).
Result<std::unique_ptr<runtime::Runtime>> makeRuntime(
    const RuntimeConfig& config, Clock& clock, std::function<void(std::string_view)> warn = {},
    int max_concurrency = 16, bool prewarm = false);

}  // namespace relay::config
