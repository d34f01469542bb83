#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/runtime.h"

namespace relay::worker {

/// The backend named `sandbox`, `docker` or `process` (RELAY_RUNTIME / --runtime). A backend
/// that cannot work on this host is still returned: it reports every app unavailable with the
/// reason. Fails only for an unknown name or a malformed DOCKER_HOST. For docker, containers a
/// crashed Relay on this host left behind are removed first. `warn` receives secondary
/// failures (default: none reported). `max_concurrency` is MAX_CONCURRENCY (the sandbox's CPU
/// weight, and the most prewarmed sandboxes kept). `prewarm`: the sandbox keeps prewarmed
/// sandboxes (docs/runtimes.md "Prewarmed sandboxes"); only the worker asks, a one-shot command
/// would start one for nothing.
Result<std::unique_ptr<runtime::Runtime>> makeRuntime(
    const std::string& name, Clock& clock, const std::string& docker_host,
    std::function<void(std::string_view)> warn = {}, int max_concurrency = 16,
    bool prewarm = false);

}  // namespace relay::worker
