#include "pattern/string_table.h"

#include <cstring>
#include <functional>

namespace relay::pattern {
namespace {

std::uint64_t load(const char* p, std::size_t n) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, n);
  return v;
}

// Mixes two 64-bit words into one (the 128-bit multiply fold of wyhash).
std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  __extension__ using Wide = unsigned __int128;  // GCC and Clang on 64-bit targets
  const Wide product = static_cast<Wide>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

// Field values are mostly short: up to 16 bytes take two overlapping loads and one multiply,
// a fraction of a general-purpose string hash. Longer keys fall back to std::hash.
[[gnu::always_inline]] inline std::uint64_t hashOf(std::string_view key) {
  constexpr std::uint64_t kSeed0 = 0xa0761d6478bd642fULL, kSeed1 = 0xe7037ed1a0b428dbULL;
  const std::size_t n = key.size();
  const char* p = key.data();
  std::uint64_t a, b;
  if (n >= 8) {
    if (n > 16) return std::hash<std::string_view>{}(key);
    a = load(p, 8);
    b = load(p + n - 8, 8);
  } else if (n >= 4) {
    a = load(p, 4);
    b = load(p + n - 4, 4);
  } else {
    a = n == 0 ? 0
               : (static_cast<std::uint64_t>(static_cast<unsigned char>(p[0])) << 16) |
                     (static_cast<std::uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8) |
                     static_cast<unsigned char>(p[n - 1]);
    b = 0;
  }
  return mix(a ^ kSeed0, b ^ kSeed1 ^ n);
}

// The slot comes from the low bits, the tag from the high ones (never 0: 0 means empty).
std::uint32_t tagOf(std::uint64_t hash) { return static_cast<std::uint32_t>(hash >> 32) | 1u; }

}  // namespace

void StringTable::build(const std::map<std::string, std::vector<std::uint32_t>>& entries,
                        std::vector<std::uint32_t>& postings) {
  size_ = entries.size();
  std::size_t capacity = 4;
  while (capacity < entries.size() * 2) capacity *= 2;  // load factor at most 1/2
  tags_.assign(capacity, 0);
  slots_.assign(capacity, 0);
  mask_ = capacity - 1;
  keys_.clear();
  entries_.clear();
  for (const auto& [key, rules] : entries) {
    const std::uint64_t hash = hashOf(key);
    Entry entry;
    entry.key_offset = static_cast<std::uint32_t>(keys_.size());
    entry.key_size = static_cast<std::uint32_t>(key.size());
    entry.posting = {static_cast<std::uint32_t>(postings.size()),
                     static_cast<std::uint32_t>(rules.size())};
    keys_ += key;
    postings.insert(postings.end(), rules.begin(), rules.end());
    std::uint64_t at = hash & mask_;
    while (tags_[at] != 0) at = (at + 1) & mask_;
    tags_[at] = tagOf(hash);
    slots_[at] = static_cast<std::uint32_t>(entries_.size());
    entries_.push_back(entry);
  }
}

const Posting* StringTable::find(std::string_view key) const {
  if (size_ == 0) return nullptr;
  const std::uint64_t hash = hashOf(key);
  const std::uint32_t tag = tagOf(hash);
  for (std::uint64_t at = hash & mask_;; at = (at + 1) & mask_) {
    const std::uint32_t found = tags_[at];
    if (found == 0) return nullptr;
    if (found != tag) continue;
    const Entry& entry = entries_[slots_[at]];
    if (entry.key_size == key.size() &&
        std::string_view(keys_.data() + entry.key_offset, entry.key_size) == key) {
      return &entry.posting;
    }
  }
}

}  // namespace relay::pattern
