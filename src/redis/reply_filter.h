#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relay::redis {

/// Caps on what one reply may hold in memory, applied while it streams in from the socket
/// (docs/operations.md "Memory"): a producer can store 512 MB in one stream field, and
/// XREADGROUP, XAUTOCLAIM, XCLAIM and XRANGE return whole entries, so without them one hostile
/// entry would be pulled whole into every worker that reads it.
struct ReplyLimits {
  /// A bulk string longer than this arrives cut (see ReplyFilter).
  std::size_t max_bulk = 256 * 1024;
  /// Bytes of bulk strings one array may hold as its direct elements (a stream entry's field
  /// values); once spent, each further bulk arrives cut to what is left of `kept`.
  std::size_t max_array_bytes = 512 * 1024;
  /// Elements an array may have; past them the rest is dropped (see ReplyFilter).
  std::size_t max_elements = 4096;
  /// The first bytes a cut bulk string keeps.
  std::size_t kept = 256;
};

/// A streaming filter on the RESP2 bytes a server sends, between the socket and hiredict's
/// reader, for replies asked for with ReplyLimits. It never holds more than one header line
/// and its stack of open arrays; a cut bulk string's bytes are skipped as they arrive, never
/// buffered. What it rewrites keeps the reply's shape, so the element counts of the arrays
/// around it stay true:
/// - a bulk string over the limits becomes a 2-element array: `[<its first bytes>, <its true
///   length as an integer>]` (no stream entry value is ever an array, so readers tell it apart);
/// - an array of more than max_elements keeps its first max_elements elements, then one more
///   element: `<its true element count as an integer>`.
/// Replies asked for without limits pass through unchanged (their structure is still followed,
/// to know where the next reply begins). Not thread-safe: one per connection.
class ReplyFilter {
 public:
  /// The limits of the next reply not yet begun (nullopt: none), in the order the commands
  /// were sent. A reply the server sends without one queued passes unchanged.
  void expect(std::optional<ReplyLimits> limits);
  /// Consumes `input` (any split of the byte stream) and appends the filtered bytes to `out`.
  void feed(std::string_view input, std::string& out);
  /// Whether bytes the filter could not follow as RESP2 were seen: it then passes everything
  /// unchanged (hiredict reports the protocol error).
  bool confused() const { return state_ == State::kConfused; }
  /// Replies expected and not yet complete.
  std::size_t expected() const { return queue_.size() + (in_reply_ ? 1 : 0); }

 private:
  enum class State { kType, kLine, kHeader, kBulk, kConfused };
  struct Frame {
    std::uint64_t total = 0;  // elements the server sends
    std::uint64_t seen = 0;   // elements received so far
    std::uint64_t kept = 0;   // elements passed on (max_elements when cut)
    std::size_t bytes = 0;    // bulk bytes passed on as direct elements
    bool cut = false;         // more than max_elements: a count ends it
  };

  void header(std::string_view line, std::string& out);
  void startBulk(std::uint64_t length, std::string& out);
  void elementDone(std::string& out);
  void beginReply();
  bool dropping() const { return drop_from_ >= 0; }
  void emit(std::string& out, std::string_view bytes) const {
    if (!dropping()) out.append(bytes);
  }

  State state_ = State::kType;
  char type_ = 0;
  std::string line_;    // a header line being read (type byte excluded)
  char line_last_ = 0;  // the last byte of a status, error or integer line passed so far
  std::deque<std::optional<ReplyLimits>> queue_;
  std::optional<ReplyLimits> limits_;  // of the reply in progress
  bool in_reply_ = false;
  std::vector<Frame> stack_;
  long drop_from_ = -1;  // index of the frame whose elements past max_elements are dropped
  // The bulk string being read: bytes still to pass, then to skip (its CRLF included), and
  // when cut, its true length for the integer that follows.
  std::uint64_t pass_ = 0;
  std::uint64_t skip_ = 0;
  std::optional<std::uint64_t> cut_length_;
};

}  // namespace relay::redis
