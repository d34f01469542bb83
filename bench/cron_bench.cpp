// Cost of computing a schedule's next fire time (what every worker does for every schedule each
// minute, and what `relay app inspect` does a few times per schedule), next to a trivial
// baseline measured in the same run: the machine is shared and noisy, so compare ratios.
//
//   cron_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "schedule/next_fire.h"

namespace {

using relay::WallTime;
using relay::schedule::CronExpression;
using relay::schedule::TimeZone;

// 2024-05-15T10:07:30Z, a Wednesday.
const WallTime kAfter{std::chrono::seconds(1715767650)};

CronExpression cronOrDie(const char* text) {
  auto cron = CronExpression::parse(text);
  if (!cron.ok()) std::abort();
  return cron.value();
}

TimeZone zoneOrDie(const char* name) {
  auto zone = TimeZone::load(name);
  if (!zone.ok()) std::abort();
  return zone.value();
}

// Baseline: formatting-free arithmetic on a time point, the cheapest "compute a time" there is.
void BM_Baseline_AddMinuteToTimePoint(benchmark::State& state) {
  WallTime t = kAfter;
  for (auto _ : state) {
    t += std::chrono::minutes(1);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_Baseline_AddMinuteToTimePoint);

void BM_Parse(benchmark::State& state, const char* text) {
  for (auto _ : state) {
    auto cron = CronExpression::parse(text);
    benchmark::DoNotOptimize(cron);
  }
}
BENCHMARK_CAPTURE(BM_Parse, every_minute, "* * * * *");
BENCHMARK_CAPTURE(BM_Parse, business_hours, "*/15 9-17 * jan-jun,sep-dec mon-fri");

void BM_NextFireTime(benchmark::State& state, const char* text, const char* zone_name,
                     std::int64_t after_seconds) {
  const CronExpression cron = cronOrDie(text);
  const TimeZone zone = zoneOrDie(zone_name);
  const WallTime after{std::chrono::seconds(after_seconds)};
  for (auto _ : state) {
    auto next = relay::schedule::nextFireTime(cron, zone, after);
    benchmark::DoNotOptimize(next);
  }
}
BENCHMARK_CAPTURE(BM_NextFireTime, every_minute_utc, "* * * * *", "UTC", 1715767650);
BENCHMARK_CAPTURE(BM_NextFireTime, business_hours_berlin, "*/15 9-17 * * mon-fri", "Europe/Berlin",
                  1715767650);
BENCHMARK_CAPTURE(BM_NextFireTime, daily_kathmandu, "0 9 * * *", "Asia/Kathmandu", 1715767650);
// 2024-03-09T12:00Z: the search crosses New York's spring-forward gap.
BENCHMARK_CAPTURE(BM_NextFireTime, gap_new_york, "30 2 * * *", "America/New_York", 1709985600);
// 2040: past Debian's zone tables, offsets come from the zone file's TZ rule.
BENCHMARK_CAPTURE(BM_NextFireTime, rule_era_berlin_2040, "*/15 9-17 * * mon-fri", "Europe/Berlin",
                  2220000000);
// Worst cases: a leap day four years away, and a schedule that never fires (5-year scan).
BENCHMARK_CAPTURE(BM_NextFireTime, leap_day_lord_howe, "0 0 29 2 *", "Australia/Lord_Howe",
                  1715767650);
BENCHMARK_CAPTURE(BM_NextFireTime, never_fires_utc, "0 0 30 2 *", "UTC", 1715767650);
BENCHMARK_CAPTURE(BM_NextFireTime, thirteenth_friday_and_weekday, "0 0 13 * fri",
                  "America/New_York", 1715767650);

void BM_IsFireTime(benchmark::State& state) {
  const CronExpression cron = cronOrDie("*/15 9-17 * * mon-fri");
  const TimeZone zone = zoneOrDie("Europe/Berlin");
  const WallTime at{std::chrono::seconds(1715761800)};  // 2024-05-15T08:30:00Z = 10:30 CEST
  for (auto _ : state) benchmark::DoNotOptimize(relay::schedule::isFireTime(cron, zone, at));
}
BENCHMARK(BM_IsFireTime);

}  // namespace

BENCHMARK_MAIN();
