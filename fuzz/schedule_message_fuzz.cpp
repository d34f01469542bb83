// libFuzzer target: a schedule occurrence message as the consumer receives it. The input is
// split at its first '\n' into the `relay_schedule` value and the `event` value (no '\n': no
// event field); parseEnvelope and admitSchedule run on them against one fixed app. Neither may
// crash or break its contract (a parsed envelope round-trips; an admitted occurrence names an
// existing schedule and is a real firing; every refusal says why); a violation aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/schedule_admission.h"
#include "schedule/next_fire.h"
#include "schedule/occurrence.h"

namespace {

using relay::catalog::ScheduleAdmission;

relay::app::Schedule scheduleOf(const char* name, const char* cron, const char* zone) {
  auto parsed = relay::schedule::CronExpression::parse(cron);
  auto loaded = relay::schedule::TimeZone::load(zone);
  if (!parsed.ok() || !loaded.ok()) std::abort();  // the fuzzer needs package tzdata
  return relay::app::Schedule{
      .name = name, .cron_text = cron, .cron = *parsed, .time_zone = *loaded, .handler = "bin/h"};
}

const relay::app::Snapshot& snapshot() {
  static const relay::app::Snapshot apps = [] {
    auto app = std::make_shared<relay::app::App>();
    app->name = "reports";
    app->schedules.push_back(scheduleOf("nightly", "30 2 * * *", "Europe/Berlin"));
    app->schedules.push_back(scheduleOf("tick", "* * * * *", "UTC"));
    std::vector<relay::app::AppEntry> entries(1);
    entries[0].name = "reports";
    entries[0].app = app;
    return relay::app::Snapshot("/apps", std::move(entries), {}, 1);
  }();
  return apps;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\n');
  const std::string envelope(input.substr(0, split));

  const auto parsed = relay::schedule::parseEnvelope(envelope);
  if (parsed.ok()) {
    const auto again = relay::schedule::parseEnvelope(parsed->envelope());
    if (!again.ok() || !(*again == *parsed)) std::abort();
  } else if (parsed.error().message.empty()) {
    std::abort();
  }

  relay::invocation::Message entry;
  entry.id = "1-0";
  entry.fields.emplace_back("relay_schedule", envelope);
  if (split != std::string_view::npos) {
    entry.fields.emplace_back("event", std::string(input.substr(split + 1)));
  }
  const ScheduleAdmission admission = relay::catalog::admitSchedule(snapshot(), entry, 4096);
  switch (admission.verdict) {
    case ScheduleAdmission::Verdict::kRun:
      if (!admission.occurrence || !admission.app || !admission.schedule) std::abort();
      if (!relay::schedule::isFireTime(admission.schedule->cron, admission.schedule->time_zone,
                                       admission.occurrence->scheduled_at)) {
        std::abort();
      }
      break;
    case ScheduleAdmission::Verdict::kObsolete:
      if (admission.reason.empty() || !admission.occurrence) std::abort();
      break;
    case ScheduleAdmission::Verdict::kMalformed:
      if (admission.reason.rfind("malformed schedule occurrence: ", 0) != 0) std::abort();
      break;
  }
  return 0;
}
