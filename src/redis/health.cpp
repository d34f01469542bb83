#include "redis/health.h"

#include <array>
#include <string_view>

namespace relay::redis {

std::optional<std::string> unhealthyReason(const Error& error) {
  switch (error.kind) {
    case ErrorKind::kIo:
    case ErrorKind::kTimeout:
    case ErrorKind::kClosed:
      return "unreachable: " + error.message;
    case ErrorKind::kConfig:
    case ErrorKind::kProtocol:
      return error.message;
    case ErrorKind::kReply:
      break;
  }
  constexpr std::array<std::string_view, 9> kUnavailable = {
      "NOAUTH",     "WRONGPASS",   "NOPERM",   "READONLY", "LOADING",
      "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "MOVED"};
  for (std::string_view code : kUnavailable) {
    if (isReplyError(error, code)) return error.message;
  }
  return std::nullopt;
}

void Health::healthy() {
  std::lock_guard lock(mutex_);
  problem_.reset();
}

void Health::failed(const Error& error) {
  auto reason = unhealthyReason(error);
  std::lock_guard lock(mutex_);
  problem_ = std::move(reason);
}

std::optional<std::string> Health::problem() const {
  std::lock_guard lock(mutex_);
  return problem_;
}

}  // namespace relay::redis
