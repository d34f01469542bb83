#include "worker/runtime_factory.h"

#include "runtime/docker/docker_runtime.h"
#include "runtime/process/process_runtime.h"
#include "runtime/sandbox/sandbox_runtime.h"

namespace relay::worker {

Result<std::unique_ptr<runtime::Runtime>> makeRuntime(const std::string& name, Clock& clock,
                                                      const std::string& docker_host,
                                                      std::function<void(std::string_view)> warn,
                                                      int max_concurrency, bool prewarm) {
  if (name == "sandbox") {
    runtime::SandboxSettings settings;
    settings.cpu_slots = max_concurrency;
    settings.prewarm = prewarm;
    settings.prewarm_settings.max_total = static_cast<std::size_t>(max_concurrency);
    return std::unique_ptr<runtime::Runtime>(runtime::SandboxRuntime::create(clock, settings));
  }
  if (name == "process") {
    return std::unique_ptr<runtime::Runtime>(std::make_unique<runtime::ProcessRuntime>(clock));
  }
  if (name == "docker") {
    runtime::docker::DockerSettings settings;
    settings.docker_host = docker_host;
    if (warn) settings.warn = warn;
    auto docker = runtime::docker::DockerRuntime::create(clock, settings);
    if (!docker.ok()) return docker.error();
    // An unreachable daemon is not fatal here: apps show it as their availability reason.
    auto reaped = (*docker)->reapStale();
    if (reaped.ok() && *reaped > 0 && warn) {
      warn("removed " + std::to_string(*reaped) + " containers left by a crashed Relay");
    }
    return std::unique_ptr<runtime::Runtime>(std::move(docker).value());
  }
  return Error::invalid("unknown runtime \"" + name + "\": expected sandbox, docker or process");
}

}  // namespace relay::worker
