#include "config/runtime_factory.h"

#include "common/enum_names.h"
#include "config/config.h"
#include "runtime/docker/docker_runtime.h"
#include "runtime/process/process_runtime.h"
#include "runtime/sandbox/sandbox_runtime.h"

namespace relay::config {

// RELAY_RUNTIME's and --runtime's values.
constexpr EnumNames<Backend, 3> kBackendNames = {{{
    {Backend::kSandbox, "sandbox"},
    {Backend::kDocker, "docker"},
    {Backend::kProcess, "process"},
}}};

std::string_view backendName(Backend backend) { return kBackendNames.name(backend); }

std::optional<Backend> backendFromName(std::string_view name) { return kBackendNames.parse(name); }

Result<std::unique_ptr<runtime::Runtime>> makeRuntime(Backend backend, Clock& clock,
                                                      const std::string& docker_host,
                                                      std::function<void(std::string_view)> warn,
                                                      int max_concurrency, bool prewarm) {
  RuntimeConfig config;
  config.backend = backend;
  config.docker_host = docker_host;
  return makeRuntime(config, clock, std::move(warn), max_concurrency, prewarm);
}

Result<std::unique_ptr<runtime::Runtime>> makeRuntime(const RuntimeConfig& config, Clock& clock,
                                                      std::function<void(std::string_view)> warn,
                                                      int max_concurrency, bool prewarm) {
  const std::string& docker_host = config.docker_host;
  switch (config.backend) {
    case Backend::kSandbox: {
      runtime::SandboxSettings settings;
      settings.docker_host = docker_host;
      settings.image_cache.dir = config.image_cache;
      settings.image_cache.max_bytes = config.image_cache_bytes;
      settings.sandbox_launcher = config.sandbox_launcher;
      settings.cpu_slots = max_concurrency;
      settings.prewarm = prewarm;
      settings.prewarm_settings.max_total = static_cast<std::size_t>(max_concurrency);
      return std::unique_ptr<runtime::Runtime>(runtime::SandboxRuntime::create(clock, settings));
    }
    case Backend::kProcess:
      return std::unique_ptr<runtime::Runtime>(std::make_unique<runtime::ProcessRuntime>(clock));
    case Backend::kDocker:
      break;
  }
  runtime::docker::DockerSettings settings;
  settings.docker_host = docker_host;
  if (warn) settings.warn = std::move(warn);
  // Prewarmed containers follow the arrival rate up to MAX_CONCURRENCY (docs/runtimes.md
  // "Prewarmed containers").
  settings.prewarm = prewarm;
  settings.prewarm_settings.max_total = static_cast<std::size_t>(max_concurrency);
  settings.prewarm_settings.max_per_shape = static_cast<std::size_t>(max_concurrency);
  auto docker = runtime::docker::DockerRuntime::create(clock, std::move(settings));
  if (!docker.ok()) return docker.error();
  return std::unique_ptr<runtime::Runtime>(std::move(docker).value());
}

}  // namespace relay::config
