#include "runtime/docker/attach_stream.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/poll.h"

namespace relay::runtime::docker {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

Error broken(std::string_view what, int error_number) {
  return Error::unavailable("docker attach stream: " + std::string(what) + ": " +
                            std::strerror(error_number));
}

}  // namespace

AttachStream::AttachStream(http::HijackedConnection connection, std::string_view input,
                           AttachDemuxer::Sink sink)
    : connection_(std::move(connection)),
      input_(input),
      demuxer_(std::move(sink)),
      buffer_(kReadChunk, '\0') {}

Status AttachStream::writeInput() {
  const int fd = connection_.fd.get();
  while (written_ < input_.size()) {
    const std::string_view rest = input_.substr(written_);
    const ssize_t sent = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (sent >= 0) {
      written_ += static_cast<std::size_t>(sent);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {};
    if (errno == EPIPE || errno == ECONNRESET) {
      // The handler exited (or closed stdin) without reading everything: not an error of ours.
      input_closed_ = true;
      return {};
    }
    return broken("writing stdin", errno);
  }
  // All input is out: the half-close is the EOF the handler reads.
  if (::shutdown(fd, SHUT_WR) != 0 && errno != ENOTCONN) return broken("closing stdin", errno);
  input_closed_ = true;
  return {};
}

Status AttachStream::handleReadable(bool& ended) {
  while (true) {
    const ssize_t got = ::recv(connection_.fd.get(), buffer_.data(), buffer_.size(), 0);
    if (got > 0) {
      if (auto status = demuxer_.feed({buffer_.data(), static_cast<std::size_t>(got)}); !status) {
        return status;
      }
      continue;
    }
    if (got == 0) {
      ended = true;
      return demuxer_.finish();
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {};
    return broken("reading output", errno);
  }
}

Result<bool> AttachStream::pump(Clock& clock, MonoTime deadline) {
  if (ended_) return true;
  if (!connection_.buffered.empty()) {
    const std::string early = std::move(connection_.buffered);
    connection_.buffered.clear();
    if (auto status = demuxer_.feed(early); !status) return status.error();
  }
  while (true) {
    if (!input_closed_) {
      if (auto status = writeInput(); !status) return status.error();
    }
    const short events = input_closed_ ? POLLIN : POLLIN | POLLOUT;
    auto ready = pollUntil(clock, connection_.fd.get(), events, deadline);
    if (!ready) return ready.error();
    if (*ready == 0) return false;
    if (*ready & (POLLIN | POLLHUP | POLLERR)) {
      bool ended = false;
      if (auto status = handleReadable(ended); !status) return status.error();
      if (ended) {
        ended_ = true;
        return true;
      }
    }
  }
}

}  // namespace relay::runtime::docker
