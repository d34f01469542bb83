#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/environment.h"
#include "common/result.h"
#include "observability/logger.h"
#include "redis/endpoint.h"
#include "tracing/tracing_config.h"

namespace relay::worker {

/// Everything `relay start` is configured with (relay.md section 1), validated.
struct WorkerConfig {
  redis::Endpoint redis;
  std::string stream = "events";
  std::string group = "relay";
  std::string consumer;  // <hostname>-<pid> unless RELAY_CONSUMER
  std::filesystem::path apps = "/apps";
  std::string runtime = "sandbox";
  int max_concurrency = 16;
  std::size_t max_event_bytes = 256 * 1024;
  std::chrono::milliseconds invocation_retention = std::chrono::hours(24 * 7);
  std::chrono::milliseconds stream_retention = std::chrono::hours(24);
  std::chrono::milliseconds dlq_retention = std::chrono::hours(24 * 7);
  std::string http_addr = "127.0.0.1:9464";
  observability::LogLevel log_level = observability::LogLevel::kInfo;
  observability::LogFormat log_format = observability::LogFormat::kText;
  std::string docker_host = "unix:///var/run/docker.sock";
  /// OpenTelemetry export (the OTEL_* variables, docs/tracing.md); nullopt: tracing off.
  std::optional<tracing::TracingConfig> tracing;
};

using relay::Environment;

/// The process environment.
Environment processEnvironment();

/// Flags that override their variables (`--apps`, `--runtime`); empty: not given.
struct ConfigOverrides {
  std::string apps;
  std::string runtime;
};

/// Builds the configuration from the environment and the flags. The first bad value stops it
/// with a one-line kInvalidArgument error naming the variable (or flag) and what was expected;
/// nothing is read from Redis.
Result<WorkerConfig> loadConfig(const Environment& environment, const ConfigOverrides& overrides,
                                std::string_view default_consumer);

/// `<hostname>-<pid>`.
std::string defaultConsumerName();

}  // namespace relay::worker
