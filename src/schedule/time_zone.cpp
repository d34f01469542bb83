#include "schedule/time_zone.h"

#include <date/tz.h>

#include <fstream>
#include <iterator>

#include "schedule/posix_tz.h"

namespace relay::schedule {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

// Where Debian's tzdata installs the zone files; the date library (built with USE_OS_TZDB)
// reads the same directory.
constexpr std::string_view kZoneInfoDir = "/usr/share/zoneinfo";

// Past every table (Debian's fat TZif files stop in 2037): get_info here returns the zone's
// final table entry, whose `begin` is its last listed transition.
const date::sys_seconds kFarFuture{date::sys_days{date::year{9999} / 1 / 1}};

/// The POSIX TZ rule that ends a version 2+ TZif file (RFC 8536 section 3.3), if it parses.
std::optional<PosixTz> readFooter(const std::string& name) {
  std::ifstream file(std::string(kZoneInfoDir) + "/" + name, std::ios::binary);
  if (!file) return std::nullopt;
  const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (bytes.size() < 6 || bytes.compare(0, 4, "TZif") != 0 || bytes[4] < '2') return std::nullopt;
  if (bytes.back() != '\n') return std::nullopt;
  // The footer is the last line: "\n<rule>\n", and the rule itself contains no newline.
  const std::size_t start = bytes.rfind('\n', bytes.size() - 2);
  if (start == std::string::npos) return std::nullopt;
  auto footer = PosixTz::parse(std::string_view(bytes).substr(start + 1, bytes.size() - start - 2));
  if (!footer.ok()) return std::nullopt;
  return *footer;
}

}  // namespace

struct TimeZone::Data {
  std::string name;
  const date::time_zone* zone = nullptr;  // owned by the date library's database, never freed
  // The rule for instants from `footer_from` (the table's last transition) on; set only when
  // it has DST, since otherwise the table's last offset already holds forever.
  std::optional<PosixTz> footer;
  date::sys_seconds footer_from{};
};

Result<TimeZone> TimeZone::load(std::string_view iana_name) {
  const std::string name(iana_name);
  // Every exception the date library can throw is caught here: loading is the only call that
  // reaches files; after it, lookups work on the loaded tables and do not throw.
  try {
    (void)date::get_tzdb();
  } catch (const std::exception& e) {
    return Error::unavailable("timezone database " + std::string(kZoneInfoDir) +
                              " is unavailable (install package tzdata): " + e.what());
  }
  if (name == "localtime") {
    // A link to the host's /etc/localtime: the schedule would change meaning between hosts.
    return Error::invalid(
        "timezone \"localtime\" depends on the host; name an IANA zone such "
        "as \"Europe/Berlin\" or \"UTC\"");
  }
  const date::time_zone* zone = nullptr;
  try {
    // The member tzdb::locate_zone is not exported by Debian's libdate-tz; the free function
    // searches the same (already loaded) database.
    zone = date::locate_zone(name);
  } catch (const std::exception&) {
    return Error::invalid("unknown timezone \"" + name + "\"");
  }
  date::sys_info last;
  try {
    last = zone->get_info(kFarFuture);  // also makes the library load the zone's file now
  } catch (const std::exception& e) {
    return Error::unavailable("cannot read timezone \"" + name + "\": " + e.what());
  }

  auto data = std::make_shared<Data>();
  data->name = name;
  data->zone = zone;
  if (auto footer = readFooter(name); footer && footer->hasDst()) {
    data->footer = *footer;
    data->footer_from = last.begin;
  }
  return TimeZone(std::move(data));
}

const std::string& TimeZone::name() const { return data_->name; }

seconds TimeZone::offsetAt(date::sys_seconds instant) const {
  if (data_->footer && instant >= data_->footer_from) return data_->footer->offsetAt(instant);
  return data_->zone->get_info(instant).offset;
}

date::local_seconds TimeZone::toLocal(date::sys_seconds instant) const {
  return date::local_seconds{(instant + offsetAt(instant)).time_since_epoch()};
}

std::optional<date::sys_seconds> TimeZone::firstInstantOf(date::local_seconds local) const {
  // Rule-based switches are months apart, so three days after the table ends only the footer
  // can matter, and within a day of `local` there is at most one switch.
  if (data_->footer &&
      local.time_since_epoch() >= data_->footer_from.time_since_epoch() + hours(3 * 24)) {
    const date::sys_seconds guess{local.time_since_epoch()};
    std::optional<date::sys_seconds> earliest;
    for (const seconds offset : {offsetAt(guess - hours(24)), offsetAt(guess + hours(24))}) {
      const date::sys_seconds candidate = guess - offset;
      if (offsetAt(candidate) == offset && (!earliest || candidate < *earliest)) {
        earliest = candidate;
      }
    }
    return earliest;
  }
  const date::local_info info = data_->zone->get_info(local);
  if (info.result == date::local_info::nonexistent) return std::nullopt;
  // Unique, or ambiguous: `first` is the period before the switch, so it gives the earlier
  // of the two instants.
  return date::sys_seconds{local.time_since_epoch() - info.first.offset};
}

}  // namespace relay::schedule
