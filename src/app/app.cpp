#include "app/app.h"

namespace relay::app {

std::string_view runtimeName(RuntimeKind runtime) {
  switch (runtime) {
    case RuntimeKind::kPython3:
      return "python3";
    case RuntimeKind::kNode:
      return "node";
    case RuntimeKind::kExec:
      return "exec";
  }
  return "exec";
}

std::optional<RuntimeKind> runtimeFromName(std::string_view name) {
  for (const RuntimeKind kind : {RuntimeKind::kPython3, RuntimeKind::kNode, RuntimeKind::kExec}) {
    if (runtimeName(kind) == name) return kind;
  }
  return std::nullopt;
}

std::string_view defaultImage(RuntimeKind runtime) {
  switch (runtime) {
    case RuntimeKind::kPython3:
      return "python:3.12-slim";
    case RuntimeKind::kNode:
      return "node:20-slim";
    case RuntimeKind::kExec:
      return "debian:12-slim";
  }
  return "debian:12-slim";
}

const Rule* App::findRule(std::string_view handler) const {
  for (const Rule& rule : rules) {
    if (rule.handler == handler) return &rule;
  }
  return nullptr;
}

const Schedule* App::findSchedule(std::string_view schedule_name) const {
  for (const Schedule& schedule : schedules) {
    if (schedule.name == schedule_name) return &schedule;
  }
  return nullptr;
}

}  // namespace relay::app
