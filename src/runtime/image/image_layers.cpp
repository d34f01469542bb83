#include "runtime/image/image_layers.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/image/sha256.h"

namespace relay::runtime::image {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kLayerReadChunk = 1 << 20;
constexpr std::size_t kMaxMetadata = 4 << 20;  // manifests, configs and indexes are small
constexpr std::string_view kRefAnnotation = "org.opencontainers.image.ref.name";

Error layoutError(const std::string& message) { return Error::invalid(message); }

Result<std::string> readSmallFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return layoutError("cannot read " + path.string() + ": " + std::strerror(errno));
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxMetadata) return layoutError(path.string() + " is larger than 4 MiB");
  }
  return text;
}

Result<json> parseJson(const std::string& text, const std::string& what) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return layoutError(what + " is not valid JSON");
  return parsed;
}

std::string stringAt(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A blob of an OCI layout: blobs/<algorithm>/<hex>, sha256 only.
Result<fs::path> blobPath(const fs::path& layout, const std::string& digest) {
  if (!isSha256Digest(digest)) {
    return layoutError("unsupported or malformed digest \"" + digest + "\" (sha256 only)");
  }
  return layout / "blobs" / "sha256" / digest.substr(7);
}

// A small blob read whole and checked against its digest.
Result<json> verifiedJsonBlob(const fs::path& layout, const std::string& digest,
                              const std::string& what) {
  auto path = blobPath(layout, digest);
  if (!path) return path.error();
  auto text = readSmallFile(*path);
  if (!text) return text.error();
  if (const std::string actual = sha256Digest(*text); actual != digest) {
    return layoutError(what + " " + path->string() + " has digest " + actual + ", expected " +
                       digest);
  }
  return parseJson(*text, what + " " + path->string());
}

// The config's rootfs.diff_ids, checked to be as many as the layers.
Result<std::vector<std::string>> diffIds(const json& config, std::size_t layers) {
  std::vector<std::string> ids;
  const auto rootfs = config.is_object() ? config.find("rootfs") : config.end();
  if (config.is_object() && rootfs != config.end() && rootfs->is_object()) {
    const auto list = rootfs->find("diff_ids");
    if (list != rootfs->end() && list->is_array()) {
      for (const json& id : *list) ids.push_back(id.is_string() ? id.get<std::string>() : "");
    }
  }
  if (ids.size() != layers) {
    return layoutError("the image config lists " + std::to_string(ids.size()) +
                       " layer digests for " + std::to_string(layers) + " layers");
  }
  for (const std::string& id : ids) {
    if (!isSha256Digest(id))
      return layoutError("unsupported layer digest \"" + id + "\" (sha256 only)");
  }
  return ids;
}

std::string hostArchitecture() {
  utsname name{};
  ::uname(&name);
  const std::string machine = name.machine;
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64") return "arm64";
  return machine;
}

bool isIndex(const std::string& media_type) {
  return media_type == "application/vnd.oci.image.index.v1+json" ||
         media_type == "application/vnd.docker.distribution.manifest.list.v2+json";
}

// The manifest descriptor of index.json (following one nested index to this platform).
Result<json> manifestOf(const fs::path& layout, std::string_view ref) {
  auto text = readSmallFile(layout / "index.json");
  if (!text) return text.error();
  auto index = parseJson(*text, (layout / "index.json").string());
  if (!index) return index.error();
  const auto manifests = index->is_object() ? index->find("manifests") : index->end();
  if (!index->is_object() || manifests == index->end() || !manifests->is_array() ||
      manifests->empty()) {
    return layoutError((layout / "index.json").string() + " lists no manifests");
  }
  json chosen;
  if (ref.empty()) {
    if (manifests->size() != 1) {
      return layoutError(
          (layout / "index.json").string() + " lists " + std::to_string(manifests->size()) +
          " manifests: name one as oci:DIR:REF (its " + std::string(kRefAnnotation) + ")");
    }
    chosen = manifests->front();
  } else {
    for (const json& descriptor : *manifests) {
      const auto annotations =
          descriptor.is_object() ? descriptor.find("annotations") : descriptor.end();
      if (descriptor.is_object() && annotations != descriptor.end() &&
          stringAt(*annotations, kRefAnnotation.data()) == ref) {
        chosen = descriptor;
        break;
      }
    }
    if (chosen.is_null()) {
      return layoutError((layout / "index.json").string() + " has no manifest named \"" +
                         std::string(ref) + "\"");
    }
  }
  if (!isIndex(stringAt(chosen, "mediaType"))) return chosen;
  auto nested = verifiedJsonBlob(layout, stringAt(chosen, "digest"), "image index");
  if (!nested) return nested.error();
  const auto list = nested->is_object() ? nested->find("manifests") : nested->end();
  if (nested->is_object() && list != nested->end() && list->is_array()) {
    for (const json& descriptor : *list) {
      const auto platform = descriptor.is_object() ? descriptor.find("platform") : descriptor.end();
      if (platform != descriptor.end() && stringAt(*platform, "os") == "linux" &&
          stringAt(*platform, "architecture") == hostArchitecture()) {
        return descriptor;
      }
    }
  }
  return layoutError("the image index has no manifest for linux/" + hostArchitecture());
}

Result<json> ociManifest(const fs::path& layout, std::string_view ref) {
  auto descriptor = manifestOf(layout, ref);
  if (!descriptor) return descriptor.error();
  return verifiedJsonBlob(layout, stringAt(*descriptor, "digest"), "image manifest");
}

// Decompresses gzip (several members allowed) into a callback.
class Gunzip {
 public:
  Gunzip() { ok_ = ::inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK; }
  ~Gunzip() { ::inflateEnd(&stream_); }
  Gunzip(const Gunzip&) = delete;
  Gunzip& operator=(const Gunzip&) = delete;

  template <typename Sink>
  Status feed(std::string_view in, Sink&& sink) {
    if (!ok_) return layoutError("zlib could not start");
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    stream_.avail_in = static_cast<uInt>(in.size());
    char out[65536];
    while (stream_.avail_in > 0) {
      stream_.next_out = reinterpret_cast<Bytef*>(out);
      stream_.avail_out = sizeof out;
      const int result = ::inflate(&stream_, Z_NO_FLUSH);
      if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) {
        return layoutError(std::string("corrupt gzip layer: ") +
                           (stream_.msg ? stream_.msg : "inflate"));
      }
      const std::size_t produced = sizeof out - stream_.avail_out;
      if (produced > 0) {
        if (auto status = sink(std::string_view(out, produced)); !status) return status;
      }
      ended_ = result == Z_STREAM_END;
      if (ended_ && stream_.avail_in > 0) ::inflateReset(&stream_);  // another member follows
      if (result == Z_BUF_ERROR && produced == 0) break;
    }
    return {};
  }
  bool ended() const { return ended_; }

 private:
  z_stream stream_{};
  bool ok_ = false;
  bool ended_ = false;
};

Status applyLayer(const LayerBlob& layer, std::size_t number, LayerExtractor& extractor) {
  const std::string what =
      "layer " + std::to_string(number) + " (" + layer.file.filename().string() + ")";
  UniqueFd file(::open(layer.file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.valid())
    return layoutError("cannot open " + layer.file.string() + ": " + std::strerror(errno));
  Sha256 blob_hash, diff_hash;
  TarReader reader(extractor);
  std::optional<Gunzip> gunzip;
  bool first = true;
  const auto untar = [&](std::string_view bytes) {
    diff_hash.update(bytes);
    return reader.feed(bytes);
  };
  std::string buffer(kLayerReadChunk, '\0');
  extractor.beginLayer();
  while (true) {
    const ssize_t got = ::read(file.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return layoutError("cannot read " + layer.file.string() + ": " + std::strerror(errno));
    if (got == 0) break;
    const std::string_view bytes(buffer.data(), static_cast<std::size_t>(got));
    blob_hash.update(bytes);
    if (first) {
      first = false;
      if (bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4)) {
        return layoutError(what + " is zstd-compressed, which Relay cannot read: use gzip or none");
      }
      if (bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b') gunzip.emplace();
    }
    Status status = gunzip ? gunzip->feed(bytes, untar) : untar(bytes);
    if (!status) return Error{status.error().kind, what + ": " + status.error().message};
  }
  if (gunzip && !gunzip->ended()) return layoutError(what + ": gzip stream truncated");
  if (auto status = reader.finish(); !status)
    return layoutError(what + ": " + status.error().message);
  if (const std::string actual = diff_hash.digest(); actual != layer.diff_id) {
    return layoutError(what + " has content digest " + actual + ", expected " + layer.diff_id);
  }
  if (const std::string actual = blob_hash.digest();
      !layer.blob_digest.empty() && actual != layer.blob_digest) {
    return layoutError(what + " has digest " + actual + ", expected " + layer.blob_digest);
  }
  return extractor.endLayer();
}

}  // namespace

Result<ImageLayers> readDockerArchive(const fs::path& dir, std::string_view expected_digest) {
  auto text = readSmallFile(dir / "manifest.json");
  if (!text) return text.error();
  auto manifest = parseJson(*text, "the export's manifest.json");
  if (!manifest) return manifest.error();
  if (!manifest->is_array() || manifest->size() != 1 || !manifest->front().is_object()) {
    return layoutError("the export's manifest.json does not describe exactly one image");
  }
  const json& image = manifest->front();
  const auto clean = [&](const std::string& member) -> Result<fs::path> {
    auto path = cleanMemberPath(member);
    if (!path) return path.error();
    if (path->empty()) return layoutError("the export's manifest.json names an empty path");
    return dir / *path;
  };
  auto config_path = clean(stringAt(image, "Config"));
  if (!config_path) return config_path.error();
  auto config_text = readSmallFile(*config_path);
  if (!config_text) return config_text.error();
  if (const std::string actual = sha256Digest(*config_text); actual != expected_digest) {
    return layoutError("the exported image config has digest " + actual + ", expected " +
                       std::string(expected_digest));
  }
  auto config = parseJson(*config_text, "the image config");
  if (!config) return config.error();
  const auto layers = image.find("Layers");
  if (layers == image.end() || !layers->is_array()) {
    return layoutError("the export's manifest.json lists no layers");
  }
  auto ids = diffIds(*config, layers->size());
  if (!ids) return ids.error();
  ImageLayers result{std::string(expected_digest), {}};
  for (std::size_t i = 0; i < layers->size(); ++i) {
    auto path = clean((*layers)[i].is_string() ? (*layers)[i].get<std::string>() : "");
    if (!path) return path.error();
    result.layers.push_back({*path, (*ids)[i], {}});
  }
  return result;
}

Result<std::string> ociLayoutDigest(const fs::path& dir, std::string_view ref) {
  auto manifest = ociManifest(dir, ref);
  if (!manifest) return manifest.error();
  const auto config = manifest->is_object() ? manifest->find("config") : manifest->end();
  if (!manifest->is_object() || config == manifest->end())
    return layoutError("the manifest has no config");
  const std::string digest = stringAt(*config, "digest");
  if (!isSha256Digest(digest)) return layoutError("unsupported config digest \"" + digest + "\"");
  return digest;
}

Result<ImageLayers> readOciLayout(const fs::path& dir, std::string_view ref) {
  auto manifest = ociManifest(dir, ref);
  if (!manifest) return manifest.error();
  const auto config_descriptor = manifest->find("config");
  if (config_descriptor == manifest->end()) return layoutError("the manifest has no config");
  const std::string digest = stringAt(*config_descriptor, "digest");
  auto config = verifiedJsonBlob(dir, digest, "image config");
  if (!config) return config.error();
  const auto layers = manifest->find("layers");
  if (layers == manifest->end() || !layers->is_array())
    return layoutError("the manifest has no layers");
  auto ids = diffIds(*config, layers->size());
  if (!ids) return ids.error();
  ImageLayers result{digest, {}};
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const std::string blob = stringAt((*layers)[i], "digest");
    auto path = blobPath(dir, blob);
    if (!path) return path.error();
    result.layers.push_back({*path, (*ids)[i], blob});
  }
  return result;
}

Status applyLayers(const ImageLayers& image, LayerExtractor& extractor) {
  for (std::size_t i = 0; i < image.layers.size(); ++i) {
    if (auto status = applyLayer(image.layers[i], i + 1, extractor); !status) return status;
  }
  return {};
}

Status ArchiveStager::entry(const TarEntry& entry) {
  auto clean = cleanMemberPath(entry.path);
  if (!clean) return clean.error();
  current_ = *clean;
  if (clean->empty()) return {};
  const fs::path path = dir_ / *clean;
  std::error_code ec;
  if (entry.type == TarEntry::Type::kDirectory) {
    fs::create_directories(path, ec);
    return ec ? layoutError("cannot make " + path.string() + ": " + ec.message()) : Status{};
  }
  // Docker 25+ exports link the legacy names to blobs; Relay reads the names manifest.json
  // gives, which are regular files in every format.
  if (entry.type != TarEntry::Type::kFile) return {};
  fs::create_directories(path.parent_path(), ec);
  file_.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file_.valid())
    return layoutError("cannot write " + path.string() + ": " + std::strerror(errno));
  return {};
}

Status ArchiveStager::data(std::string_view bytes) {
  while (file_.valid() && !bytes.empty()) {
    const ssize_t n = ::write(file_.get(), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::internal("cannot write " + current_ + ": " + std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Status ArchiveStager::end() {
  file_.reset();
  return {};
}

}  // namespace relay::runtime::image
