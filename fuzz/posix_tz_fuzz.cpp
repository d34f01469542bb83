// libFuzzer target: PosixTz::parse (the TZ rule that ends every zone file) on arbitrary bytes,
// then offsetAt around the years it computes switches for. Must never crash or hang.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "schedule/posix_tz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto tz = relay::schedule::PosixTz::parse(text);
  if (!tz.ok()) {
    if (tz.error().message.empty()) std::abort();
    return 0;
  }
  for (const int year : {1900, 2040, 2100, 2262}) {
    const date::sys_seconds start{date::sys_days{date::year{year} / 1 / 1}};
    for (int hour = 0; hour < 366 * 24; hour += 97) {
      const auto offset = tz->offsetAt(start + std::chrono::hours(hour));
      // A written offset is at most 24:59:59 either way, and an unwritten DST offset adds one
      // hour to it.
      if (offset >= std::chrono::hours(26) || offset <= -std::chrono::hours(26)) std::abort();
    }
  }
  return 0;
}
