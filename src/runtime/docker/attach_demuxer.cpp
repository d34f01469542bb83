#include "runtime/docker/attach_demuxer.h"

#include <algorithm>
#include <string>

namespace relay::runtime::docker {

Status AttachDemuxer::feed(std::string_view bytes) {
  if (failed_) return Error::internal("attach stream demultiplexer used after an error");
  while (!bytes.empty()) {
    if (remaining_ > 0) {
      const std::size_t take = std::min<std::size_t>(bytes.size(), remaining_);
      sink_(kind_, bytes.substr(0, take));
      bytes.remove_prefix(take);
      remaining_ -= static_cast<std::uint32_t>(take);
      continue;
    }
    const std::size_t take = std::min(bytes.size(), header_.size() - header_size_);
    std::copy_n(bytes.data(), take, header_.data() + header_size_);
    header_size_ += take;
    bytes.remove_prefix(take);
    if (header_size_ < header_.size()) break;
    header_size_ = 0;
    const auto byte = [this](std::size_t i) { return static_cast<std::uint8_t>(header_[i]); };
    if (byte(0) > 2 || byte(1) != 0 || byte(2) != 0 || byte(3) != 0) {
      failed_ = true;
      return Error::internal("malformed attach stream frame header (stream byte " +
                             std::to_string(byte(0)) + "); was the container created with a TTY?");
    }
    kind_ = static_cast<StreamKind>(byte(0));
    remaining_ = (std::uint32_t{byte(4)} << 24) | (std::uint32_t{byte(5)} << 16) |
                 (std::uint32_t{byte(6)} << 8) | std::uint32_t{byte(7)};
  }
  return {};
}

Status AttachDemuxer::finish() const {
  if (failed_) return Error::internal("attach stream demultiplexer used after an error");
  if (header_size_ != 0 || remaining_ != 0) {
    return Error::internal("attach stream ended inside a frame");
  }
  return {};
}

}  // namespace relay::runtime::docker
