#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace relay::pattern {

/// A run of rule indices inside a shared posting array.
struct Posting {
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
};

/// An immutable open-addressing hash table from strings to postings, built once from a sorted
/// map. Probing reads only a compact array of 32-bit hash tags (4 bytes a slot, so even 10,000
/// keys stay in cache); the key bytes are compared only on a tag match.
class StringTable {
 public:
  /// Appends each key's rule indices to `postings` and indexes them.
  void build(const std::map<std::string, std::vector<std::uint32_t>>& entries,
             std::vector<std::uint32_t>& postings);

  /// The posting of `key`, or nullptr.
  const Posting* find(std::string_view key) const;

  bool empty() const { return size_ == 0; }

 private:
  struct Entry {
    std::uint32_t key_offset = 0;
    std::uint32_t key_size = 0;
    Posting posting;
  };

  std::string keys_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> tags_;   // per slot: a hash tag, never 0; 0 marks an empty slot
  std::vector<std::uint32_t> slots_;  // per slot: the index into entries_
  std::uint64_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace relay::pattern
