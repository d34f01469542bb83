#pragma once

#include <unistd.h>

#include <utility>

namespace relay {

/// Owns one file descriptor and closes it on destruction: the one owner of raw descriptors in
/// Relay (sockets, pipes, pidfds, inotify, eventfd, files). Move-only; -1 means none.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  /// Gives up ownership without closing; the caller now owns the returned descriptor.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes the descriptor held (if any) and takes ownership of `fd`.
  void reset(int fd = -1) noexcept {
    const int old = std::exchange(fd_, fd);
    if (old >= 0) ::close(old);
  }

 private:
  int fd_ = -1;
};

}  // namespace relay
