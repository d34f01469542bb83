#include "runtime/sandbox/sandbox_identities.h"

namespace relay::runtime {
namespace {

// 64-bit FNV-1a: a stable spread of names over the range, the same on every host.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace

uid_t SandboxIdentities::of(const std::string& app) {
  std::lock_guard lock(mutex_);
  if (const auto known = by_app_.find(app); known != by_app_.end()) return known->second;
  // Slot 0 is the probe's; apps spread over the others.
  const std::uint32_t slots = range_.count - 1;
  std::uint32_t slot = static_cast<std::uint32_t>(fnv1a(app) % slots);
  for (std::uint32_t tried = 0; tried < slots && by_id_.contains(range_.first + 1 + slot);
       ++tried) {
    slot = (slot + 1) % slots;
  }
  // More apps than ids: they share (the range is documented as at least the number of apps).
  const uid_t id = range_.first + 1 + slot;
  by_app_.emplace(app, id);
  by_id_.emplace(id, app);
  return id;
}

}  // namespace relay::runtime
