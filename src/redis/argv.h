#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace relay::redis {

/// hiredict's argv/argvlen arrays for one command, borrowed from the caller's strings (which
/// must outlive it).
class Argv {
 public:
  Argv() = default;
  template <typename Range>
  explicit Argv(const Range& args) {
    for (const auto& arg : args) add(arg);
  }
  void add(std::string_view arg) {
    // An empty string_view may carry a null data(); hiredict memcpy()s from it even for 0 bytes.
    pointers_.push_back(arg.empty() ? "" : arg.data());
    lengths_.push_back(arg.size());
  }
  const char** pointers() { return pointers_.data(); }
  const size_t* lengths() const { return lengths_.data(); }
  size_t size() const { return pointers_.size(); }

 private:
  std::vector<const char*> pointers_;
  std::vector<size_t> lengths_;
};

}  // namespace relay::redis
