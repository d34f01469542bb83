#include "cli/redis_session.h"

namespace relay::cli {

std::optional<RedisSession> openRedisSession(std::string_view command,
                                             const worker::ConfigOverrides& overrides,
                                             CommandContext& context) {
  auto config =
      worker::loadConfig(worker::processEnvironment(), overrides, worker::defaultConsumerName());
  if (!config.ok()) {
    context.err << "relay " << command << ": " << config.error().message << "\n";
    context.exit_code = kExitUsage;
    return std::nullopt;
  }
  auto connection = redis::Connection::create(config->redis);
  if (!connection.ok()) {
    context.err << "relay " << command << ": cannot reach Redis at " << config->redis.describe()
                << ": " << connection.error().message << "\n";
    context.exit_code = kExitFailed;
    return std::nullopt;
  }
  invocation::StreamKeys keys{config->stream, config->group};
  return RedisSession{std::move(config).value(), std::move(keys), std::move(connection).value()};
}

void reportRedisError(std::string_view command, const redis::Error& error,
                      CommandContext& context) {
  context.err << "relay " << command << ": redis: " << error.message << "\n";
  context.exit_code = kExitFailed;
}

}  // namespace relay::cli
