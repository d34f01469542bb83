#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "config/config.h"
#include "invocation/keys.h"
#include "redis/connection.h"

namespace relay::cli {

/// What the Redis-backed commands (`dlq`, `stats`) work on: the settings of docs/operations.md
/// "Configuration" and one connection.
struct RedisSession {
  config::WorkerConfig config;
  invocation::StreamKeys keys;
  std::unique_ptr<redis::Connection> redis;
};

/// Reads the configuration (flags over the environment, exactly as `relay start` does) and
/// connects. On failure writes `relay <command>: ...` and sets the exit code (2 for a bad
/// setting, 1 when Redis cannot be reached), and returns nullopt.
std::optional<RedisSession> openRedisSession(std::string_view command,
                                             const config::ConfigOverrides& overrides,
                                             CommandContext& context);

/// The configuration alone (for commands that check their input before touching Redis); on a
/// bad setting writes `relay <command>: ...`, sets exit code 2 and returns nullopt.
std::optional<config::WorkerConfig> loadCommandConfig(std::string_view command,
                                                      const config::ConfigOverrides& overrides,
                                                      CommandContext& context);

/// Connects with an already loaded configuration (exit 1 when Redis cannot be reached).
std::optional<RedisSession> connectRedisSession(std::string_view command,
                                                config::WorkerConfig config,
                                                CommandContext& context);

/// Why `endpoint` cannot be used, naming it once: "cannot reach Redis at <endpoint>: <why>" (or
/// "redis at <endpoint>: <why>" when retrying cannot help: TLS, login, cluster layout). A
/// connection error already starting with the server's address does not repeat it.
std::string connectionProblem(const redis::Endpoint& endpoint, const redis::Error& error);

/// Reports a failed Redis call of `command` (exit 1).
void reportRedisError(std::string_view command, const redis::Error& error, CommandContext& context);

}  // namespace relay::cli
