#include "runtime/runtime.h"

namespace relay::runtime {

const char* languageName(Language language) {
  switch (language) {
    case Language::kExec:
      return "exec";
    case Language::kPython3:
      return "python3";
    case Language::kNode:
      return "node";
  }
  return "unknown";
}

std::optional<Language> languageFromName(std::string_view name) {
  for (const Language language : {Language::kExec, Language::kPython3, Language::kNode}) {
    if (name == languageName(language)) return language;
  }
  return std::nullopt;
}

std::string_view defaultImage(Language language) {
  switch (language) {
    case Language::kPython3:
      return "python:3.12-slim";
    case Language::kNode:
      return "node:20-slim";
    case Language::kExec:
      break;
  }
  return "debian:12-slim";
}

const char* triggerName(Trigger trigger) {
  switch (trigger) {
    case Trigger::kEvent:
      return "event";
    case Trigger::kSchedule:
      return "schedule";
    case Trigger::kManual:
      return "manual";
    case Trigger::kReplay:
      return "replay";
  }
  return "unknown";
}

std::vector<std::pair<std::string, std::string>> handlerEnvironment(const InvocationSpec& spec) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", "/tmp"},
      {"LANG", "C.UTF-8"},
      {"PYTHONDONTWRITEBYTECODE", "1"},
  };
  const auto set = [&env](const std::string& key, std::string value) {
    for (auto& [existing, old] : env) {
      if (existing == key) {
        old = std::move(value);
        return;
      }
    }
    env.emplace_back(key, std::move(value));
  };
  for (const auto& [key, value] : spec.app_env) set(key, value);
  // Relay's own variables come last and win: a template cannot forge them.
  set("RELAY_HANDLER", spec.handler);
  set("RELAY_APP", spec.app);
  set("RELAY_MESSAGE_ID", spec.message_id);
  set("RELAY_ATTEMPT", std::to_string(spec.attempt));
  set("RELAY_INVOCATION_ID", spec.invocationId());
  set("RELAY_TRIGGER", triggerName(spec.trigger));
  return env;
}

}  // namespace relay::runtime
