#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "runtime/image/layer_extractor.h"

namespace relay::runtime::image {

/// One layer to apply: a tar file, possibly gzip-compressed, and the digests it must have.
struct LayerBlob {
  std::filesystem::path file;
  std::string diff_id;      // sha256 of the uncompressed tar: the config's rootfs.diff_ids
  std::string blob_digest;  // sha256 of the file as stored (OCI manifests); empty: not given
};

/// An image whose config was verified against its digest: the digest (the image ID, `sha256:`
/// of the config) and its layers, lowest first.
struct ImageLayers {
  std::string digest;
  std::vector<LayerBlob> layers;
};

/// A `docker save` archive extracted to `dir` (what the Engine API's image export streams:
/// manifest.json naming the config file and the layer files, in the legacy layout or the OCI
/// one of Docker 25+). The config must hash to `expected_digest` (the image ID the daemon
/// named); kInvalidArgument otherwise, or for anything malformed.
Result<ImageLayers> readDockerArchive(const std::filesystem::path& dir,
                                      std::string_view expected_digest);

/// An OCI image layout directory: index.json, then the manifest (`ref`: the one whose
/// org.opencontainers.image.ref.name annotation is `ref`; empty: the only one; an image index
/// is followed to this machine's platform), then the config, each blob verified against its
/// digest as it is read.
Result<ImageLayers> readOciLayout(const std::filesystem::path& dir, std::string_view ref);

/// The config digest readOciLayout() would find, reading only index.json and the manifest.
Result<std::string> ociLayoutDigest(const std::filesystem::path& dir, std::string_view ref);

/// Applies the layers in order onto `extractor`, verifying each one's digests (diff_id of the
/// uncompressed stream, blob_digest of the file) as it is read: a mismatch is kInvalidArgument
/// and what was extracted must be discarded. gzip layers are decompressed (zlib); zstd ones are
/// refused.
Status applyLayers(const ImageLayers& image, LayerExtractor& extractor);

/// Writes the regular files and directories of a tar stream under a directory (cleaned paths,
/// no links, no special files): how an image export arrives before it is read.
class ArchiveStager final : public TarVisitor {
 public:
  explicit ArchiveStager(std::filesystem::path dir) : dir_(std::move(dir)) {}
  Status entry(const TarEntry& entry) override;
  Status data(std::string_view bytes) override;
  Status end() override;

 private:
  std::filesystem::path dir_;
  UniqueFd file_;
  std::string current_;
};

}  // namespace relay::runtime::image
