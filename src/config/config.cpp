#include "config/config.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/duration.h"
#include "common/size.h"
#include "common/whole_number.h"
#include "http/address.h"
#include "runtime/sandbox/native_sandbox.h"

namespace relay::config {
namespace {

Error bad(std::string_view name, const std::string& value, std::string_view expected) {
  return Error::invalid(std::string(name) + "=\"" + value + "\": " + std::string(expected));
}

bool validName(std::string_view value) {
  if (value.empty() || value.size() > 200) return false;
  for (char c : value) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  }
  return true;
}

// A name-like variable: kept as is when set, `target` untouched when unset.
Status readName(const Environment& environment, std::string_view name, std::string& target) {
  if (auto value = environment(name)) {
    if (!validName(*value)) {
      return bad(name, *value, "expected a non-empty value without spaces or control characters");
    }
    target = *value;
  }
  return {};
}

// REDIS_TLS_*: files are checked here, so a typo stops `relay start` before Redis is touched.
Status tlsSettings(const Environment& environment, redis::Endpoint& endpoint) {
  const std::pair<std::string_view, std::string*> variables[] = {
      {"REDIS_TLS_CA", &endpoint.tls_settings.ca_file},
      {"REDIS_TLS_CERT", &endpoint.tls_settings.cert_file},
      {"REDIS_TLS_KEY", &endpoint.tls_settings.key_file},
      {"REDIS_TLS_SERVER_NAME", &endpoint.tls_settings.server_name}};
  for (const auto& [name, target] : variables) {
    auto value = environment(name);
    if (!value || value->empty()) continue;
    if (!endpoint.tls) {
      return bad(name, *value, "TLS settings need a rediss:// (or rediss+sentinel://) REDIS_URI");
    }
    if (name != "REDIS_TLS_SERVER_NAME" && ::access(value->c_str(), R_OK) != 0) {
      return bad(name, *value, std::string("cannot read the file: ") + std::strerror(errno));
    }
    *target = *value;
  }
  if (endpoint.tls_settings.cert_file.empty() != endpoint.tls_settings.key_file.empty()) {
    return Error::invalid(
        "REDIS_TLS_CERT and REDIS_TLS_KEY go together: a client certificate needs its key");
  }
  return {};
}

}  // namespace

Environment processEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::string defaultConsumerName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] ? host : "relay") + "-" + std::to_string(::getpid());
}

Result<RuntimeConfig> loadRuntimeConfig(const Environment& environment,
                                        std::string_view runtime_flag) {
  RuntimeConfig config;
  const bool from_flag = !runtime_flag.empty();
  const std::string name =
      from_flag ? std::string(runtime_flag) : environment("RELAY_RUNTIME").value_or("sandbox");
  const std::optional<Backend> backend = backendFromName(name);
  if (!backend) return bad(from_flag ? "--runtime" : "RELAY_RUNTIME", name, kExpectedBackend);
  config.backend = *backend;
  if (auto status = readName(environment, "DOCKER_HOST", config.docker_host); !status.ok()) {
    return status.error();
  }
  if (auto value = environment("RELAY_IMAGE_CACHE")) {
    if (!validName(*value) || value->front() != '/') {
      return bad("RELAY_IMAGE_CACHE", *value, "expected an absolute directory path");
    }
    config.image_cache = *value;
  }
  if (auto value = environment("RELAY_IMAGE_CACHE_SIZE")) {
    auto parsed = parseSize(*value);
    if (!parsed.ok() || *parsed < (64ULL << 20)) {
      return bad("RELAY_IMAGE_CACHE_SIZE", *value, "expected a size of at least 64MiB, like 10GiB");
    }
    config.image_cache_bytes = *parsed;
  }
  if (auto value = environment("RELAY_SANDBOX_LAUNCHER")) {
    auto launcher = runtime::sandboxLauncherFromName(*value);
    if (!launcher) return bad("RELAY_SANDBOX_LAUNCHER", *value, "expected auto, native or bwrap");
    config.sandbox_launcher = *launcher;
  }
  return config;
}

Result<std::filesystem::path> loadAppsRoot(const Environment& environment,
                                           std::string_view apps_flag) {
  if (!apps_flag.empty()) return std::filesystem::path(apps_flag);
  const std::string apps = environment("RELAY_APPS").value_or("/apps");
  if (apps.empty()) return Error::invalid("RELAY_APPS: expected a directory");
  return std::filesystem::path(apps);
}

Result<WorkerConfig> loadConfig(const Environment& environment, const ConfigOverrides& overrides,
                                std::string_view default_consumer) {
  WorkerConfig config;
  config.consumer = std::string(default_consumer);
  const auto duration = [&](std::string_view name, std::chrono::milliseconds& target) -> Status {
    if (auto value = environment(name)) {
      auto parsed = parseDuration(*value);
      if (!parsed.ok()) return bad(name, *value, "expected a duration like 90s, 24h, 7d, or 0");
      target = *parsed;
    }
    return {};
  };
  std::string uri = "127.0.0.1:6379";
  for (auto [name, target] : {std::pair<std::string_view, std::string*>{"REDIS_URI", &uri},
                              {"REDIS_STREAM", &config.stream},
                              {"REDIS_GROUP", &config.group},
                              {"RELAY_CONSUMER", &config.consumer},
                              {"RELAY_HTTP_ADDR", &config.http_addr}}) {
    if (auto status = readName(environment, name, *target); !status.ok()) return status.error();
  }
  auto endpoint = redis::parseRedisUri(uri);
  if (!endpoint.ok()) {
    // Never echo a URI back: it may carry a password.
    return Error::invalid("REDIS_URI: " + endpoint.error().message);
  }
  config.redis = *endpoint;
  if (auto tls = tlsSettings(environment, config.redis); !tls.ok()) return tls.error();
  // On a Redis Cluster every key of the stream must share its slot (docs/operations.md).
  config.redis.slot_key = config.stream;
  if (auto http = http::parseAddress(config.http_addr); !http.ok()) {
    return Error::invalid("RELAY_HTTP_ADDR: " + http.error().message);
  }

  auto apps = loadAppsRoot(environment, overrides.apps);
  if (!apps.ok()) return apps.error();
  config.apps = std::move(apps).value();

  auto runtime = loadRuntimeConfig(environment, overrides.runtime);
  if (!runtime.ok()) return runtime.error();
  config.runtime = std::move(runtime).value();

  auto tracing = tracing::loadTracingConfig(environment);
  if (!tracing.ok()) return tracing.error();
  config.tracing = std::move(tracing).value();

  auto systemd = loadSystemdConfig(environment, ::getpid());
  if (!systemd.ok()) return systemd.error();
  config.systemd = std::move(systemd).value();

  if (auto value = environment("MAX_CONCURRENCY")) {
    int parsed = 0;
    if (!parseWholeNumber(*value, parsed) || parsed < 1 || parsed > 1024) {
      return bad("MAX_CONCURRENCY", *value, "expected a whole number from 1 to 1024");
    }
    config.max_concurrency = parsed;
  }
  if (auto value = environment("MAX_EVENT_BYTES")) {
    auto parsed = parseSize(*value);
    if (!parsed.ok() || *parsed == 0 || *parsed > 16ULL * 1024 * 1024) {
      return bad("MAX_EVENT_BYTES", *value, "expected a size from 1 byte to 16MiB, e.g. 256KiB");
    }
    config.max_event_bytes = static_cast<std::size_t>(*parsed);
  }
  for (auto [name, target] : {std::pair<std::string_view, std::chrono::milliseconds*>{
                                  "REDIS_INVOCATION_RETENTION", &config.invocation_retention},
                              {"REDIS_STREAM_RETENTION", &config.stream_retention},
                              {"REDIS_DLQ_RETENTION", &config.dlq_retention}}) {
    if (auto status = duration(name, *target); !status.ok()) return status.error();
  }
  if (auto value = environment("RELAY_ARCHIVE_RETENTION")) {
    auto parsed = parseDuration(*value);
    if (!parsed.ok() || *parsed > kMaxArchiveRetention) {
      return bad("RELAY_ARCHIVE_RETENTION", *value,
                 "expected a duration up to 366d like 30d, or 0 for no stream archive");
    }
    config.archive_retention = *parsed;
  }
  if (auto value = environment("RELAY_ARCHIVE_PATTERN_FILE")) {
    if (value->empty()) {
      return bad("RELAY_ARCHIVE_PATTERN_FILE", *value,
                 "expected a pattern file's path (unset it to archive every entry)");
    }
    if (config.archive_retention.count() == 0) {
      return bad("RELAY_ARCHIVE_PATTERN_FILE", *value,
                 "set RELAY_ARCHIVE_RETENTION too: the pattern filters the stream's archive, "
                 "which exists only with a retention");
    }
    config.archive_pattern_file = *value;
  }
  if (auto value = environment("RELAY_LOG_LEVEL")) {
    auto level = observability::parseLogLevel(*value);
    if (!level) return bad("RELAY_LOG_LEVEL", *value, "expected debug, info, warn or error");
    config.log_level = *level;
  }
  if (auto value = environment("RELAY_LOG_FORMAT")) {
    auto format = observability::parseLogFormat(*value);
    if (!format) return bad("RELAY_LOG_FORMAT", *value, "expected text or json");
    config.log_format = *format;
  }
  return config;
}

}  // namespace relay::config
