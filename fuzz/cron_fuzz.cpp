// libFuzzer target: CronExpression::parse on arbitrary bytes, then nextFireTime/isFireTime on
// whatever parses. Neither may crash, hang or break their contract (a fire time is later than
// the instant asked about and is itself a fire time); a violation aborts.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "schedule/next_fire.h"

namespace {

using relay::schedule::TimeZone;

// Zones with DST gaps and overlaps of one hour, half an hour, and a quarter-hour offset.
const std::array<TimeZone, 6>& zones() {
  static const std::array<TimeZone, 6> loaded = [] {
    auto load = [](std::string_view name) {
      auto zone = TimeZone::load(name);
      if (!zone.ok()) std::abort();  // the fuzzer needs package tzdata
      return zone.value();
    };
    return std::array<TimeZone, 6>{load("UTC"),
                                   load("Europe/Berlin"),
                                   load("America/New_York"),
                                   load("Australia/Lord_Howe"),
                                   load("Asia/Kathmandu"),
                                   load("Pacific/Chatham")};
  }();
  return loaded;
}

std::uint64_t fnv1a(const std::uint8_t* data, std::size_t size) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 1099511628211ULL;
  return hash;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto cron = relay::schedule::CronExpression::parse(text);
  if (!cron.ok()) {
    if (cron.error().message.empty()) std::abort();  // every rejection says why
    return 0;
  }
  // The input also picks the zone and a start between 1970 and 2200 (seconds included), so the
  // fuzzer reaches DST transitions and the rule-based years past 2037 too.
  const std::uint64_t hash = fnv1a(data, size);
  const TimeZone& zone = zones()[hash % zones().size()];
  constexpr std::int64_t kSpanSeconds = 230LL * 366 * 24 * 3600;
  relay::WallTime after{
      std::chrono::seconds(static_cast<std::int64_t>((hash >> 8) % kSpanSeconds))};
  for (int i = 0; i < 4; ++i) {
    const auto next = relay::schedule::nextFireTime(*cron, zone, after);
    if (!next) break;
    if (*next <= after) std::abort();
    if (!relay::schedule::isFireTime(*cron, zone, *next)) std::abort();
    after = *next;
  }
  return 0;
}
