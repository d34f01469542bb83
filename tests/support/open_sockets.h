#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace relay::testing {

/// The descriptors of this process that are sockets without FD_CLOEXEC: each would reach a
/// handler that Relay forks and execs; Relay must open none.
inline std::vector<int> socketsWithoutCloexec() {
  std::vector<int> leaking;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::stoi(entry.path().filename().string());
    char target[64] = {};
    const ssize_t length = ::readlink(entry.path().c_str(), target, sizeof target - 1);
    if (length <= 0 || std::string(target, static_cast<size_t>(length)).rfind("socket:", 0) != 0) {
      continue;
    }
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0) leaking.push_back(fd);
  }
  return leaking;
}

}  // namespace relay::testing
