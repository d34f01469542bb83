#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "http/client.h"
#include "runtime/docker/attach_demuxer.h"

namespace relay::runtime::docker {

/// Drives a container's hijacked attach connection: writes the handler's stdin verbatim, then
/// half-closes the connection (the container sees EOF), while passing output frames to the
/// demultiplexer. Reads and writes are interleaved, so a handler that prints before it has
/// read all of its input cannot deadlock against Relay. Memory stays bounded by one read
/// buffer. Not thread-safe.
class AttachStream {
 public:
  /// `input` must outlive the stream.
  AttachStream(http::HijackedConnection connection, std::string_view input,
               AttachDemuxer::Sink sink);

  /// Pumps until the daemon closes the stream (true) or `deadline` passes (false); may be
  /// called again after a deadline. Blocks. kUnavailable when the connection breaks, kInternal
  /// on a malformed frame.
  Result<bool> pump(Clock& clock, MonoTime deadline);

  /// Input bytes the container accepted (less than the input when it exited without reading).
  std::size_t inputWritten() const { return written_; }

 private:
  Status writeInput();
  Status handleReadable(bool& ended);

  http::HijackedConnection connection_;
  std::string_view input_;
  std::size_t written_ = 0;
  bool input_closed_ = false;
  bool ended_ = false;
  AttachDemuxer demuxer_;
  std::string buffer_;
};

}  // namespace relay::runtime::docker
