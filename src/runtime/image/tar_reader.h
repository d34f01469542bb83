#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace relay::runtime::image {

/// One member of a tar archive, with its PAX and GNU long-name extensions applied.
struct TarEntry {
  enum class Type { kFile, kHardLink, kSymlink, kDirectory, kCharDevice, kBlockDevice, kFifo };
  Type type = Type::kFile;
  std::string path;        // as archived: relative, possibly `./`-prefixed; never trusted
  std::string link;        // the target of a symlink or a hard link
  std::uint64_t size = 0;  // data bytes that follow (regular files only)
  std::uint32_t mode = 0;  // permission bits (07777)
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::int64_t mtime = 0;  // seconds since the epoch
};

/// Receives a tar archive's members as TarReader finds them: entry(), then the entry's data in
/// pieces, then end(). An Error from any of them stops the reader.
class TarVisitor {
 public:
  virtual ~TarVisitor() = default;
  virtual Status entry(const TarEntry& entry) = 0;
  virtual Status data(std::string_view bytes) = 0;
  virtual Status end() = 0;
};

/// A push parser of tar archives (POSIX ustar with PAX `x`/`g` headers, GNU `L`/`K` long names,
/// base-256 numbers): what `docker save` writes and image layers are. Bytes may be fed split
/// anywhere; member data is passed on as it arrives, never buffered whole. Each header's checksum
/// is verified. Extended headers are capped at kMaxExtendedHeader bytes. Not thread-safe.
class TarReader {
 public:
  explicit TarReader(TarVisitor& visitor) : visitor_(visitor) {}

  /// Consumes `bytes`. An Error (kInvalidArgument: what is malformed, and at which member) is
  /// final; so is the visitor's.
  Status feed(std::string_view bytes);
  /// The input ended: an Error when it ended inside a member (a truncated archive). The
  /// end-of-archive blocks are optional, as for tar(1).
  Status finish() const;
  /// Whether the end-of-archive block was seen (later bytes are ignored).
  bool ended() const { return state_ == State::kEnded; }

  static constexpr std::size_t kMaxExtendedHeader = 1 << 20;

 private:
  enum class State { kHeader, kData, kPadding, kExtended, kEnded, kFailed };

  Status header();
  Status extended();
  Status fail(std::string message);

  TarVisitor& visitor_;
  State state_ = State::kHeader;
  std::string block_;          // the header block being gathered
  std::string extended_data_;  // a PAX or GNU long-name member's data
  char extended_type_ = 0;
  std::uint64_t remaining_ = 0;  // data bytes of the current member still to come
  std::uint64_t padding_ = 0;    // bytes to the next 512-byte boundary
  // What the extended headers before the next member set.
  std::string next_path_, next_link_;
  bool next_size_set_ = false;
  std::uint64_t next_size_ = 0;
  std::uint64_t members_ = 0;
  std::string current_;  // the current member's path, for messages
};

}  // namespace relay::runtime::image
