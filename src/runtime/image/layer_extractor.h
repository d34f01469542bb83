#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "runtime/image/tar_reader.h"

namespace relay::runtime::image {

/// Applies image layers, one after the other, onto a root directory, as a container runtime
/// does (docs/runtimes.md "Image roots"): members are created inside the root and nowhere else
/// (every path is resolved with openat2 RESOLVE_IN_ROOT, so neither `..`, an absolute symlink
/// nor a symlinked parent leads out), `.wh.<name>` whiteouts delete what lower layers made,
/// `.wh..wh..opq` hides a directory's lower contents, hard links stay inside the root.
/// Set-user-ID and set-group-ID bits are dropped; device nodes are skipped (the sandbox mounts a
/// /dev of its own). Owners are kept when Relay runs as root. Not thread-safe.
class LayerExtractor final : public TarVisitor {
 public:
  /// Extracts into the directory `root` (an open directory descriptor, which it keeps).
  /// `max_bytes` caps the file data written over all layers (the image cache's limit).
  LayerExtractor(UniqueFd root, std::uint64_t max_bytes);

  /// Call before each layer's members (whiteouts and opaque directories only hide lower layers).
  void beginLayer();
  /// Call after each layer: applies its directories' modes (kept writable while they fill).
  Status endLayer();

  Status entry(const TarEntry& entry) override;
  Status data(std::string_view bytes) override;
  Status end() override;

  /// Makes `path` (a member path) a regular file, empty when it is not one already (missing, a
  /// symlink, anything else): a mount point the sandbox binds a host file onto.
  Status ensureRegularFile(const std::string& path);

  /// File data written so far.
  std::uint64_t bytesWritten() const { return written_; }

 private:
  struct PendingMode {
    std::string path;
    std::uint32_t mode;
  };

  /// The descriptor (O_PATH) of the directory `path` inside the root, created (0755) with its
  /// missing parents when `create`.
  Result<UniqueFd> directory(const std::string& path, bool create);
  Status whiteout(int parent, const std::string& dir, const std::string& name);
  Status opaque(const std::string& dir);
  /// Makes room for a new member `name` of kind `type`: removes what is there unless it is a
  /// directory that stays one.
  Status clear(int parent, const std::string& name, TarEntry::Type type);
  void setOwner(int parent, const std::string& name, const TarEntry& entry) const;

  UniqueFd root_;
  std::uint64_t max_bytes_;
  std::uint64_t written_ = 0;
  bool as_root_;
  std::set<std::string> layer_paths_;  // what this layer made: an opaque directory keeps them
  std::vector<PendingMode> pending_modes_;
  UniqueFd file_;  // the regular file being written
  std::int64_t mtime_ = 0;
  std::string current_;
};

/// A member's path made relative to the root: leading `/` and `./` and inner `.` parts dropped.
/// kInvalidArgument for a `..` part, an empty name, or a path longer than PATH_MAX. "" for the
/// root itself.
Result<std::string> cleanMemberPath(std::string_view path);

/// Removes `name` in `parent` and, for a directory, all it holds (never following symlinks).
/// A missing `name` is success.
Status removeTree(int parent, const std::string& name);

}  // namespace relay::runtime::image
