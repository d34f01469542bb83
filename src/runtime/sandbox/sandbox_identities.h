#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace relay::runtime {

/// The uids (each also the gid of the same number) sandboxes run as (docs/runtimes.md
/// "Identities"): one per app, so that per-user kernel limits (inotify instances, pipe buffer
/// pages, processes, keyring quotas) and anything keyed on the uid are never shared between
/// apps. The default range is in what systemd leaves unused (above its container ranges);
/// operators keep it out of /etc/passwd, /etc/group, /etc/subuid, /etc/subgid and any container
/// manager's ranges.
struct SandboxIdRange {
  uid_t first = 1'879'048'192;  // 0x70000000
  std::uint32_t count = 65'536;
  bool operator==(const SandboxIdRange&) const = default;
};

/// Gives each app its id. Thread-safe.
class SandboxIdentities {
 public:
  explicit SandboxIdentities(SandboxIdRange range = {}) : range_(range) {}

  /// The app's id, stable for its name: a hash of the name into the range (past the first),
  /// and on a collision with an app already given that id, the next free one. Blocks only on
  /// a short lock.
  uid_t of(const std::string& app);
  /// The id of Relay's own probe sandboxes, which no app gets.
  uid_t probe() const { return range_.first; }
  const SandboxIdRange& range() const { return range_; }

 private:
  const SandboxIdRange range_;
  std::mutex mutex_;
  std::map<std::string, uid_t, std::less<>> by_app_;
  std::map<uid_t, std::string> by_id_;
};

}  // namespace relay::runtime
