#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "common/result.h"

namespace relay::runtime::docker {

/// Which stream a piece of an attach frame belongs to (the first byte of its header).
enum class StreamKind : std::uint8_t { kStdin = 0, kStdout = 1, kStderr = 2 };

/// Splits the multiplexed attach stream of a container created without a TTY: frames of an
/// 8-byte header (stream byte, three zero bytes, big-endian uint32 payload size) followed by
/// the payload. Payloads are passed on as they arrive, possibly in pieces, so a large frame is
/// never buffered whole. Not thread-safe.
class AttachDemuxer {
 public:
  using Sink = std::function<void(StreamKind, std::string_view)>;

  explicit AttachDemuxer(Sink sink) : sink_(std::move(sink)) {}

  /// Consumes bytes split anywhere. An Error (kInternal) on a malformed header is final.
  Status feed(std::string_view bytes);
  /// The stream ended: an Error when it ended inside a frame.
  Status finish() const;

 private:
  Sink sink_;
  std::array<char, 8> header_{};
  std::size_t header_size_ = 0;
  std::uint32_t remaining_ = 0;  // payload bytes left in the current frame
  StreamKind kind_ = StreamKind::kStdout;
  bool failed_ = false;
};

}  // namespace relay::runtime::docker
