#include "app/app.h"

namespace relay::app {

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
