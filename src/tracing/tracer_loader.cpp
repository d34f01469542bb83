// Tracer::load: the OpenTelemetry implementation is a module loaded on demand (docs/tracing.md
// "Configuration"), so that relay without OTEL_* neither loads nor needs its libraries.
#include <dlfcn.h>

#include <string>
#include <system_error>

#include "tracing/tracer.h"

namespace relay::tracing {

std::filesystem::path Tracer::defaultModule() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path(".") : self.parent_path()) / "relay-otel.so";
}

Result<std::unique_ptr<Tracer>> Tracer::load(const TracingConfig& config,
                                             observability::Logger& logger,
                                             const std::filesystem::path& module) {
  // Never closed: the SDK's threads and static state live as long as the process.
  void* handle = ::dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    return Error::unavailable("tracing is configured (OTEL_*) but its module " + module.string() +
                              " cannot be loaded: " + (reason ? reason : "unknown reason") +
                              " (it needs opentelemetry-cpp, see README \"Dependencies\")");
  }
  auto create = reinterpret_cast<CreateTracerFunction>(::dlsym(handle, kCreateTracerSymbol));
  if (create == nullptr) {
    return Error::unavailable("the tracing module " + module.string() + " has no " +
                              kCreateTracerSymbol + ": not a relay-otel.so of this relay");
  }
  const TracerLog log = [&logger](bool warning, std::string_view detail) {
    const observability::LogFields fields = {{"detail", std::string(detail)}};
    if (warning) {
      logger.warn("opentelemetry", fields);
    } else {
      logger.debug("opentelemetry", fields);
    }
  };
  std::string error;
  std::unique_ptr<Tracer> tracer(create(config, log, &error));
  if (!tracer) return Error::invalid("OpenTelemetry refused the tracing settings: " + error);
  return tracer;
}

}  // namespace relay::tracing
