#include "cli/loaded_apps.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "catalog/invocation_spec.h"
#include "cli/redis_session.h"
#include "config/config.h"
#include "config/runtime_factory.h"
#include "invocation/paused_apps.h"
#include "redis/connection.h"

namespace relay::cli {
namespace {

constexpr std::chrono::seconds kPausedReadTimeout{2};

}  // namespace

std::optional<LoadedApps> loadApps(const AppFlags& flags, std::string_view command, Clock& clock,
                                   CommandContext& context) {
  const std::optional<config::RuntimeConfig> config = runtimeConfig(flags, command, context);
  if (!config) return std::nullopt;
  std::optional<std::filesystem::path> root = appsRoot(flags, command, context);
  if (!root) return std::nullopt;
  LoadedApps loaded;
  auto backend = config::makeRuntime(*config, clock);
  if (!backend.ok()) {
    context.err << "relay " << command << ": " << backend.error().message << "\n";
    context.exit_code = kExitUsage;
    return std::nullopt;
  }
  loaded.runtime = std::move(backend).value();
  runtime::Runtime& runtime = *loaded.runtime;
  app::RegistrySettings settings;
  settings.apps_root = std::move(*root);
  settings.availability = [&runtime](const app::App& app) {
    return catalog::runtimeAvailability(runtime, app);
  };
  auto registry = app::Registry::create(std::move(settings));
  if (!registry.ok()) {
    context.err << "relay " << command << ": " << registry.error().message << "\n";
    context.exit_code = kExitFailed;
    return std::nullopt;
  }
  loaded.registry = std::move(registry).value();
  return loaded;
}

Result<std::shared_ptr<const app::Snapshot>> loadTemplates(const std::filesystem::path& root) {
  app::RegistrySettings settings;
  settings.apps_root = root;
  auto registry = app::Registry::create(std::move(settings));
  if (!registry.ok()) return registry.error();
  return (*registry)->snapshot();
}

std::optional<std::set<std::string>> pausedApps(const AppFlags& flags, CommandContext& context) {
  auto config = config::loadConfig(config::processEnvironment(), {flags.apps, flags.runtime},
                                   config::defaultConsumerName());
  std::string problem;
  if (!config.ok()) {
    problem = config.error().message;
  } else {
    redis::ConnectionSettings settings;
    settings.connect_timeout = kPausedReadTimeout;
    settings.command_timeout = kPausedReadTimeout;
    auto redis = redis::Connection::create(config->redis, settings);
    if (!redis.ok()) {
      problem = connectionProblem(config->redis, redis.error());
    } else {
      auto paused = invocation::readPausedApps(**redis, {config->stream, config->group});
      if (paused.ok()) return std::move(paused).value();
      problem = paused.error().message;
    }
  }
  context.err << "note: paused apps unknown (" << problem << ")\n";
  return std::nullopt;
}

app::AppStatus clusterStatus(const app::AppEntry& entry,
                             const std::optional<std::set<std::string>>& paused) {
  app::AppStatus shown = entry.status;
  if (paused && paused->count(entry.name) > 0) {
    shown.available = false;
    shown.reason = std::string(invocation::kPausedReason);
  }
  return shown;
}

const app::AppEntry* findLoadedApp(const app::Snapshot& snapshot, const std::string& name,
                                   std::string_view command, CommandContext& context) {
  const app::AppEntry* entry = snapshot.find(name);
  if (entry == nullptr) {
    const auto ignored =
        std::find_if(snapshot.ignored().begin(), snapshot.ignored().end(),
                     [&name](const app::IgnoredDir& dir) { return dir.dir.filename() == name; });
    if (ignored != snapshot.ignored().end()) {
      context.err << "relay " << command << ": " << ignored->dir.string()
                  << " is not an app: " << ignored->reason << "\n";
    } else {
      std::string known;
      for (const app::AppEntry& app : snapshot.apps()) {
        known += (known.empty() ? "" : ", ") + app.name;
      }
      context.err << "relay " << command << ": no app named \"" << name << "\" in "
                  << snapshot.root().string() << " (apps: " << (known.empty() ? "none" : known)
                  << ")\n";
    }
    context.exit_code = kExitFailed;
    return nullptr;
  }
  if (!entry->app) {
    context.err << "relay " << command << ": app \"" << entry->name
                << "\" has no valid template; nothing is loaded:\n";
    for (const app::Diagnostic& diagnostic : entry->errors) {
      context.err << diagnostic.toString() << "\n";
    }
    context.exit_code = kExitUsage;
    return nullptr;
  }
  return entry;
}

Result<std::string> readEventArgument(const std::string& value, std::istream& stdin_stream) {
  if (value.empty() || value == "@-") {
    return std::string(std::istreambuf_iterator<char>(stdin_stream),
                       std::istreambuf_iterator<char>());
  }
  if (value[0] != '@') return value;
  std::ifstream file(value.substr(1), std::ios::binary);
  if (!file) return Error::invalid("cannot read event file " + value.substr(1));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace relay::cli
