#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "runtime/image/image_root.h"

namespace relay::runtime::docker {
class DockerApi;
}

namespace relay::runtime::image {

/// Where an app's `image` comes from (docs/runtimes.md "Image roots"): the local Docker daemon's
/// image of that name, or `oci:<dir>[:<ref>]`, an OCI image layout directory.
struct ImageReference {
  enum class Kind { kDaemon, kOciLayout };
  Kind kind = Kind::kDaemon;
  std::string name;  // daemon: the reference as written; OCI: the layout directory
  std::string ref;   // OCI: the org.opencontainers.image.ref.name to pick; empty: the only one
};
/// kInvalidArgument for an `oci:` reference whose directory is not absolute.
Result<ImageReference> parseImageReference(std::string_view text);

/// Settings of the image cache (docs/runtimes.md "Image roots"); tests shorten them.
struct ImageCacheSettings {
  std::filesystem::path dir = "/var/cache/relay/images";  // RELAY_IMAGE_CACHE
  std::uint64_t max_bytes = 10ULL << 30;                  // RELAY_IMAGE_CACHE_SIZE
  /// How long a name's digest is trusted before the daemon (or index.json) is asked again: a
  /// re-tagged image is picked up within it, and starts within it cost no daemon call.
  std::chrono::milliseconds resolve_ttl{10'000};
};

/// One image in the cache, as entries() lists it.
struct CachedImage {
  std::string digest;
  std::uint64_t bytes = 0;
  std::chrono::milliseconds unpack_time{0};
  std::filesystem::file_time_type last_used;
};

/// Image root file systems for the sandbox runtime (docs/runtimes.md "Image roots"): each image
/// is unpacked once per digest into `<dir>/<hex>/rootfs` (from the daemon's image export or an
/// OCI layout, every layer verified against its digest), shared read-only by every sandbox of it
/// and by every Relay process of the host. The cache keeps at most max_bytes: before an image is
/// unpacked the least recently used ones are removed, never one in use (an ImageRoot held by a
/// running or prewarmed sandbox of any process). Thread-safe.
class ImageCache {
 public:
  /// Makes `settings.dir` (0755: the sandbox user reaches the roots through it) and removes what
  /// a crashed process left half-done there. `daemon` resolves and exports daemon images; null:
  /// only `oci:` references work.
  static Result<std::unique_ptr<ImageCache>> create(ImageCacheSettings settings, Clock& clock,
                                                    const docker::DockerApi* daemon);

  /// The unpacked root of `reference`, unpacking it first when the cache lacks its digest.
  /// Blocks: a daemon call when the name's digest is older than resolve_ttl, the export and
  /// unpack when new (seconds). kUnavailable with the reason: image missing, daemon
  /// unreachable, a digest mismatch, a malformed layer, no room.
  Result<std::shared_ptr<const ImageRoot>> acquire(const std::string& reference);

  /// The images in the cache now (any process's), least recently used first.
  std::vector<CachedImage> entries() const;
  const ImageCacheSettings& settings() const { return settings_; }

 private:
  ImageCache(ImageCacheSettings settings, Clock& clock, const docker::DockerApi* daemon)
      : settings_(std::move(settings)), clock_(clock), daemon_(daemon) {}

  Result<std::string> resolve(const ImageReference& reference) const;
  /// The entry of `digest` when present and complete, held; nullptr when absent.
  Result<std::shared_ptr<const ImageRoot>> open(const std::string& digest) const;
  /// Exports or reads the image and unpacks it into its entry.
  Status unpack(const ImageReference& reference, const std::string& digest);
  /// Removes least recently used entries not in use until `incoming` more bytes fit.
  Status makeRoom(std::uint64_t incoming, const std::string& keep);
  std::filesystem::path scratch(std::string_view kind);

  const ImageCacheSettings settings_;
  Clock& clock_;
  const docker::DockerApi* daemon_;
  struct Resolved {
    std::shared_ptr<const ImageRoot> root;
    MonoTime at;
  };
  std::mutex mutex_;
  std::map<std::string, Resolved> resolved_;  // by reference as written
  std::mutex unpack_mutex_;                   // one unpack at a time per process
  std::uint64_t scratch_counter_ = 0;
};

}  // namespace relay::runtime::image
