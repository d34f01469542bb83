#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"

namespace relay::runtime::image {

/// An image unpacked in the cache, in use while this object lives: no Relay process evicts it
/// (a shared flock on its entry's lock file). Immutable; shared between invocations.
class ImageRoot {
 public:
  /// A top-level entry of the image's root: a directory or file to bind, or a symlink to mirror.
  struct TopEntry {
    std::string name;
    std::string symlink;  // the target when it is a symlink, else empty
  };

  ImageRoot(std::string digest, std::filesystem::path rootfs, std::uint64_t bytes,
            std::vector<TopEntry> top, UniqueFd lock)
      : digest_(std::move(digest)),
        rootfs_(std::move(rootfs)),
        bytes_(bytes),
        top_(std::move(top)),
        lock_(std::move(lock)) {}

  /// `sha256:<hex>` of the image's config: the image ID.
  const std::string& digest() const { return digest_; }
  const std::filesystem::path& rootfs() const { return rootfs_; }
  std::uint64_t bytes() const { return bytes_; }
  const std::vector<TopEntry>& topLevel() const { return top_; }
  /// Whether `name` is an executable regular file in one of the image's `search_path`
  /// directories (symlinks resolved inside the image).
  bool hasExecutable(std::string_view name, std::string_view search_path) const;

 private:
  std::string digest_;
  std::filesystem::path rootfs_;
  std::uint64_t bytes_;
  std::vector<TopEntry> top_;
  UniqueFd lock_;
};

}  // namespace relay::runtime::image
