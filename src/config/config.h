#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/environment.h"
#include "common/result.h"
#include "config/runtime_factory.h"
#include "config/systemd_config.h"
#include "observability/logger.h"
#include "redis/endpoint.h"
#include "runtime/docker/container_config.h"
#include "runtime/sandbox/sandbox_settings.h"
#include "tracing/tracing_config.h"

namespace relay::config {

/// Which backend runs handlers, and where its daemon is: read by `relay start` and by every
/// command that runs handlers or checks availability.
struct RuntimeConfig {
  Backend backend = Backend::kSandbox;                                         // RELAY_RUNTIME
  std::string docker_host = std::string(runtime::docker::kDefaultDockerHost);  // DOCKER_HOST
  /// The sandbox's image roots (docs/runtimes.md "Image roots").
  std::filesystem::path image_cache = "/var/cache/relay/images";  // RELAY_IMAGE_CACHE
  std::uint64_t image_cache_bytes = 10ULL << 30;                  // RELAY_IMAGE_CACHE_SIZE
  /// Who builds the sandboxes (docs/runtimes.md "Native launcher"): RELAY_SANDBOX_LAUNCHER.
  runtime::SandboxLauncher sandbox_launcher = runtime::SandboxLauncher::kAuto;
};

/// The longest RELAY_ARCHIVE_RETENTION: an app's `archive.retention` has the same bound
/// (docs/replay.md "Archive").
inline constexpr std::chrono::milliseconds kMaxArchiveRetention = std::chrono::hours(24 * 366);

/// Everything `relay start` is configured with (docs/operations.md "Configuration"), validated.
struct WorkerConfig {
  redis::Endpoint redis;
  std::string stream = "events";
  std::string group = "relay";
  std::string consumer;  // <hostname>-<pid> unless RELAY_CONSUMER
  std::filesystem::path apps = "/apps";
  RuntimeConfig runtime;
  int max_concurrency = 16;
  std::size_t max_event_bytes = 256 * 1024;
  std::chrono::milliseconds invocation_retention = std::chrono::hours(24 * 7);
  std::chrono::milliseconds stream_retention = std::chrono::hours(24);
  std::chrono::milliseconds dlq_retention = std::chrono::hours(24 * 7);
  /// The stream-wide archive (docs/replay.md "Archive"): RELAY_ARCHIVE_RETENTION (0: none) and
  /// RELAY_ARCHIVE_PATTERN_FILE (empty: every entry), a pattern file the worker compiles.
  std::chrono::milliseconds archive_retention{0};
  std::filesystem::path archive_pattern_file;
  std::string http_addr = "127.0.0.1:9464";
  observability::LogLevel log_level = observability::LogLevel::kInfo;
  observability::LogFormat log_format = observability::LogFormat::kText;
  /// OpenTelemetry export (the OTEL_* variables, docs/tracing.md); nullopt: tracing off.
  std::optional<tracing::TracingConfig> tracing;
  /// NOTIFY_SOCKET and the watchdog of a systemd Type=notify service; nullopt: none.
  std::optional<SystemdConfig> systemd;
};

/// The process environment.
Environment processEnvironment();

/// Flags that override their variables (`--apps`, `--runtime`); empty: not given.
struct ConfigOverrides {
  std::string apps;
  std::string runtime;
};

/// RELAY_RUNTIME, or `runtime_flag` (`--runtime`) when not empty, and DOCKER_HOST. A bad value
/// (an unknown backend, an empty or blank value) is a one-line kInvalidArgument naming the
/// variable or flag. The one place these settings are read and checked.
Result<RuntimeConfig> loadRuntimeConfig(const Environment& environment,
                                        std::string_view runtime_flag);

/// The apps root: `apps_flag` (`--apps`) when not empty, else RELAY_APPS, else /apps. A set but
/// empty RELAY_APPS is a one-line kInvalidArgument (it names no directory; unset it for /apps).
/// The one place the apps root is read, for `relay start` and every command.
Result<std::filesystem::path> loadAppsRoot(const Environment& environment,
                                           std::string_view apps_flag);

/// Builds the configuration from the environment and the flags. The first bad value stops it
/// with a one-line kInvalidArgument error naming the variable (or flag) and what was expected;
/// nothing is read from Redis.
Result<WorkerConfig> loadConfig(const Environment& environment, const ConfigOverrides& overrides,
                                std::string_view default_consumer);

/// `<hostname>-<pid>`.
std::string defaultConsumerName();

}  // namespace relay::config
