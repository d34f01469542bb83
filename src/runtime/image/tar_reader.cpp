#include "runtime/image/tar_reader.h"

#include <algorithm>
#include <cstring>

#include "common/whole_number.h"

namespace relay::runtime::image {
namespace {

constexpr std::size_t kBlock = 512;

// A NUL-terminated (or full-width) text field of a header.
std::string_view tarField(std::string_view block, std::size_t offset, std::size_t width) {
  const std::string_view raw = block.substr(offset, width);
  return raw.substr(0, std::min(raw.find('\0'), raw.size()));
}

// An octal number field (spaces and NULs around it), or GNU's base-256 form (high bit set).
bool tarNumber(std::string_view block, std::size_t offset, std::size_t width,
               std::uint64_t& value) {
  const std::string_view raw = block.substr(offset, width);
  value = 0;
  if (!raw.empty() && (static_cast<unsigned char>(raw[0]) & 0x80) != 0) {
    if ((static_cast<unsigned char>(raw[0]) & 0x40) != 0) return false;  // negative
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const unsigned byte = static_cast<unsigned char>(raw[i]) & (i == 0 ? 0x3F : 0xFF);
      if (value > (UINT64_MAX >> 8)) return false;
      value = (value << 8) | byte;
    }
    return true;
  }
  std::size_t i = 0;
  while (i < raw.size() && raw[i] == ' ') ++i;
  bool digits = false;
  for (; i < raw.size() && raw[i] >= '0' && raw[i] <= '7'; ++i) {
    if (value > (UINT64_MAX >> 3)) return false;
    value = (value << 3) | static_cast<std::uint64_t>(raw[i] - '0');
    digits = true;
  }
  for (; i < raw.size(); ++i) {
    if (raw[i] != ' ' && raw[i] != '\0') return false;
  }
  return digits || raw.find_first_not_of(std::string_view("\0 ", 2)) == std::string_view::npos;
}

// The header checksum: the bytes summed with the checksum field taken as spaces (unsigned, and
// the signed sum some old tars wrote).
bool checksumMatches(std::string_view block) {
  std::uint64_t stored = 0;
  if (!tarNumber(block, 148, 8, stored)) return false;
  std::int64_t unsigned_sum = 0, signed_sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const char c = (i >= 148 && i < 156) ? ' ' : block[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return static_cast<std::int64_t>(stored) == unsigned_sum ||
         static_cast<std::int64_t>(stored) == signed_sum;
}

}  // namespace

Status TarReader::fail(std::string message) {
  state_ = State::kFailed;
  std::string where = current_.empty() ? "member " + std::to_string(members_ + 1) : current_;
  return Error::invalid("malformed tar archive at " + where + ": " + std::move(message));
}

Status TarReader::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    switch (state_) {
      case State::kFailed:
        return Error::invalid("malformed tar archive (reported before)");
      case State::kEnded:
        return {};
      case State::kHeader: {
        const std::size_t take = std::min(bytes.size(), kBlock - block_.size());
        block_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
        if (block_.size() == kBlock) {
          if (auto status = header(); !status) return status;
          block_.clear();
        }
        break;
      }
      case State::kData:
      case State::kExtended: {
        const auto take =
            static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), remaining_));
        const std::string_view piece = bytes.substr(0, take);
        bytes.remove_prefix(take);
        remaining_ -= take;
        if (state_ == State::kExtended) {
          extended_data_.append(piece);
        } else if (!piece.empty()) {
          if (auto status = visitor_.data(piece); !status) {
            state_ = State::kFailed;
            return status;
          }
        }
        if (remaining_ > 0) break;
        if (state_ == State::kExtended) {
          if (auto status = extended(); !status) return status;
        } else if (auto status = visitor_.end(); !status) {
          state_ = State::kFailed;
          return status;
        }
        state_ = padding_ > 0 ? State::kPadding : State::kHeader;
        break;
      }
      case State::kPadding: {
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), padding_));
        bytes.remove_prefix(take);
        padding_ -= take;
        if (padding_ == 0) state_ = State::kHeader;
        break;
      }
    }
  }
  return {};
}

Status TarReader::header() {
  if (block_.find_first_not_of('\0') == std::string::npos) {
    state_ = State::kEnded;  // the first of the two zero blocks that end an archive
    return {};
  }
  if (!checksumMatches(block_)) return fail("header checksum mismatch");
  std::uint64_t size = 0, mode = 0, uid = 0, gid = 0, mtime = 0;
  if (!tarNumber(block_, 124, 12, size) || !tarNumber(block_, 100, 8, mode) ||
      !tarNumber(block_, 108, 8, uid) || !tarNumber(block_, 116, 8, gid) ||
      !tarNumber(block_, 136, 12, mtime)) {
    return fail("malformed number field");
  }
  // Far beyond any real member; keeps the padding arithmetic below from overflowing.
  if (size > (std::uint64_t{1} << 62)) return fail("member size too large");
  const char type = block_[156];
  if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
    if (size > kMaxExtendedHeader) return fail("extended header larger than 1 MiB");
    extended_type_ = type;
    extended_data_.clear();
    remaining_ = size;
    padding_ = (kBlock - size % kBlock) % kBlock;
    state_ = State::kExtended;
    if (remaining_ == 0) {
      if (auto status = extended(); !status) return status;
      state_ = padding_ > 0 ? State::kPadding : State::kHeader;
    }
    return {};
  }
  TarEntry entry;
  std::string path(tarField(block_, 0, 100));
  // POSIX ustar ("ustar\0") has a name prefix there; old GNU tars ("ustar  ") keep times there.
  if (block_.compare(257, 6, std::string_view("ustar\0", 6)) == 0) {
    const std::string_view prefix = tarField(block_, 345, 155);
    if (!prefix.empty()) path = std::string(prefix) + "/" + path;
  }
  entry.path = next_path_.empty() ? path : std::move(next_path_);
  entry.link = next_link_.empty() ? std::string(tarField(block_, 157, 100)) : std::move(next_link_);
  if (next_size_set_) size = next_size_;
  next_path_.clear();
  next_link_.clear();
  next_size_set_ = false;
  entry.mode = static_cast<std::uint32_t>(mode & 07777);
  entry.uid = static_cast<std::uint32_t>(uid);
  entry.gid = static_cast<std::uint32_t>(gid);
  entry.mtime = static_cast<std::int64_t>(mtime);
  switch (type) {
    case '0':
    case '\0':
    case '7':
      entry.type = TarEntry::Type::kFile;
      break;
    case '1':
      entry.type = TarEntry::Type::kHardLink;
      break;
    case '2':
      entry.type = TarEntry::Type::kSymlink;
      break;
    case '3':
      entry.type = TarEntry::Type::kCharDevice;
      break;
    case '4':
      entry.type = TarEntry::Type::kBlockDevice;
      break;
    case '5':
      entry.type = TarEntry::Type::kDirectory;
      break;
    case '6':
      entry.type = TarEntry::Type::kFifo;
      break;
    default:
      return fail(std::string("unsupported member type '") + type + "'");
  }
  // Only regular files carry data; a size on anything else is skipped as padding would be.
  const std::uint64_t data = entry.type == TarEntry::Type::kFile ? size : 0;
  entry.size = data;
  current_ = entry.path;
  ++members_;
  if (auto status = visitor_.entry(entry); !status) {
    state_ = State::kFailed;
    return status;
  }
  remaining_ = data;
  const std::uint64_t skipped = size - data;
  padding_ = skipped + (kBlock - size % kBlock) % kBlock;
  if (remaining_ > 0) {
    state_ = State::kData;
    return {};
  }
  if (auto status = visitor_.end(); !status) {
    state_ = State::kFailed;
    return status;
  }
  state_ = padding_ > 0 ? State::kPadding : State::kHeader;
  return {};
}

Status TarReader::extended() {
  if (extended_type_ == 'L' || extended_type_ == 'K') {
    std::string text = extended_data_.substr(0, extended_data_.find('\0'));
    (extended_type_ == 'L' ? next_path_ : next_link_) = std::move(text);
    return {};
  }
  // PAX records: "<length> <key>=<value>\n", the length counting the whole record.
  std::string_view records = extended_data_;
  while (!records.empty()) {
    const std::size_t space = records.find(' ');
    std::uint64_t length = 0;
    if (space == std::string_view::npos || !parseWholeNumber(records.substr(0, space), length) ||
        length <= space + 1 || length > records.size() || records[length - 1] != '\n') {
      return fail("malformed PAX record");
    }
    const std::string_view record = records.substr(space + 1, length - space - 2);
    records.remove_prefix(length);
    const std::size_t equals = record.find('=');
    if (equals == std::string_view::npos) return fail("PAX record without '='");
    const std::string_view key = record.substr(0, equals);
    const std::string_view value = record.substr(equals + 1);
    if (extended_type_ == 'g') continue;  // global defaults: none that matters here
    if (key == "path") {
      next_path_ = std::string(value);
    } else if (key == "linkpath") {
      next_link_ = std::string(value);
    } else if (key == "size") {
      if (!parseWholeNumber(value, next_size_)) return fail("malformed PAX size");
      next_size_set_ = true;
    }
  }
  return {};
}

Status TarReader::finish() const {
  if (state_ == State::kFailed) return Error::invalid("malformed tar archive (reported before)");
  if (state_ == State::kEnded || (state_ == State::kHeader && block_.empty())) return {};
  return Error::invalid("tar archive truncated" +
                        (current_.empty() ? std::string() : " in or after " + current_));
}

}  // namespace relay::runtime::image
