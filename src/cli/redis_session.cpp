#include "cli/redis_session.h"

namespace relay::cli {

std::optional<config::WorkerConfig> loadCommandConfig(std::string_view command,
                                                      const config::ConfigOverrides& overrides,
                                                      CommandContext& context) {
  return settingOrUsageError(
      config::loadConfig(config::processEnvironment(), overrides, config::defaultConsumerName()),
      command, context);
}

std::string connectionProblem(const redis::Endpoint& endpoint, const redis::Error& error) {
  std::string_view why = error.message;
  const std::string named = endpoint.address().describe() + ": ";
  if (!endpoint.isSentinel() && why.substr(0, named.size()) == named)
    why.remove_prefix(named.size());
  return (redis::retryCannotHelp(error) ? "redis at " : "cannot reach Redis at ") +
         endpoint.describe() + ": " + std::string(why);
}

std::optional<RedisSession> connectRedisSession(std::string_view command,
                                                config::WorkerConfig config,
                                                CommandContext& context) {
  auto connection = redis::Connection::create(config.redis);
  if (!connection.ok()) {
    // A refused configuration (TLS, login, a cluster stream without a hash tag) is not an
    // unreachable server: say which.
    context.err << "relay " << command << ": "
                << connectionProblem(config.redis, connection.error()) << "\n";
    context.exit_code = kExitFailed;
    return std::nullopt;
  }
  invocation::StreamKeys keys{config.stream, config.group};
  return RedisSession{std::move(config), std::move(keys), std::move(connection).value()};
}

std::optional<RedisSession> openRedisSession(std::string_view command,
                                             const config::ConfigOverrides& overrides,
                                             CommandContext& context) {
  auto config = loadCommandConfig(command, overrides, context);
  if (!config) return std::nullopt;
  return connectRedisSession(command, std::move(*config), context);
}

void reportRedisError(std::string_view command, const redis::Error& error,
                      CommandContext& context) {
  context.err << "relay " << command << ": redis: " << error.message << "\n";
  context.exit_code = kExitFailed;
}

}  // namespace relay::cli
