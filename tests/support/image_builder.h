#pragma once

// Image layers and OCI image layouts made in memory by the tests (docs/runtimes.md "Image
// roots"): tar archives with every member kind the extractor handles, gzip, and a layout with
// its digests, so the unpacker is exercised without a registry or a daemon.
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/image/sha256.h"

namespace relay::testing {

/// Builds a tar archive as Docker's layers are: ustar headers, PAX records for long names.
class TarBuilder {
 public:
  TarBuilder& file(const std::string& path, const std::string& content, unsigned mode = 0644) {
    member(path, '0', content, mode, "");
    return *this;
  }
  TarBuilder& dir(const std::string& path, unsigned mode = 0755) {
    member(path, '5', "", mode, "");
    return *this;
  }
  TarBuilder& symlink(const std::string& path, const std::string& target) {
    member(path, '2', "", 0777, target);
    return *this;
  }
  TarBuilder& hardlink(const std::string& path, const std::string& target) {
    member(path, '1', "", 0644, target);
    return *this;
  }
  /// The archive with its end-of-archive blocks.
  std::string finish() const { return bytes_ + std::string(1024, '\0'); }
  /// The archive so far, without the end blocks (a truncated one, cut anywhere by the caller).
  const std::string& bytes() const { return bytes_; }

  /// One header block, checksummed, with the data padded to 512 bytes.
  static std::string block(const std::string& name, char type, std::uint64_t size, unsigned mode,
                           const std::string& link) {
    std::string header(512, '\0');
    const auto put = [&header](std::size_t at, const std::string& text, std::size_t width) {
      header.replace(at, std::min(text.size(), width), text.substr(0, width));
    };
    const auto octal = [](std::uint64_t value, int width) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%0*llo", width, static_cast<unsigned long long>(value));
      return std::string(buffer);
    };
    put(0, name, 100);
    put(100, octal(mode, 7), 8);
    put(108, octal(0, 7), 8);
    put(116, octal(0, 7), 8);
    put(124, octal(size, 11), 12);
    put(136, octal(1'700'000'000, 11), 12);
    put(148, "        ", 8);
    header[156] = type;
    put(157, link, 100);
    put(257, std::string("ustar\0", 6), 6);
    put(263, "00", 2);
    unsigned sum = 0;
    for (const char c : header) sum += static_cast<unsigned char>(c);
    put(148, octal(sum, 6) + std::string("\0 ", 2), 8);
    return header;
  }

 private:
  void member(const std::string& path, char type, const std::string& content, unsigned mode,
              const std::string& link) {
    if (path.size() > 100 || link.size() > 100) {
      std::string records;
      const auto record = [&records](const std::string& key, const std::string& value) {
        const std::string body = " " + key + "=" + value + "\n";
        std::size_t length = body.size() + 1;
        while (std::to_string(length).size() + body.size() != length) ++length;
        records += std::to_string(length) + body;
      };
      if (path.size() > 100) record("path", path);
      if (link.size() > 100) record("linkpath", link);
      append(block("PaxHeaders/x", 'x', records.size(), 0644, ""), records);
    }
    append(block(path, type, content.size(), mode, link), content);
  }
  void append(const std::string& header, const std::string& content) {
    bytes_ += header;
    bytes_ += content;
    bytes_ += std::string((512 - content.size() % 512) % 512, '\0');
  }

  std::string bytes_;
};

/// gzip of `data` (one member), as registries store layers.
inline std::string gzipped(const std::string& data) {
  z_stream stream{};
  deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, data.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

/// Writes an OCI image layout of the given layers (tar archives, lowest first) into `dir`, with
/// one manifest named `ref`; returns the image's digest (its config's). A further call adds
/// another manifest to the same index.
inline std::string writeOciLayout(const std::filesystem::path& dir,
                                  const std::vector<std::string>& layers, bool gzip = false,
                                  const std::string& ref = "latest",
                                  const std::string& label = "") {
  using nlohmann::json;
  namespace fs = std::filesystem;
  fs::create_directories(dir / "blobs" / "sha256");
  const auto blob = [&dir](const std::string& content) {
    const std::string digest = runtime::image::sha256Digest(content);
    std::ofstream(dir / "blobs" / "sha256" / digest.substr(7), std::ios::binary) << content;
    return digest;
  };
  json diff_ids = json::array(), layer_descriptors = json::array();
  for (const std::string& layer : layers) {
    diff_ids.push_back(runtime::image::sha256Digest(layer));
    const std::string stored = gzip ? gzipped(layer) : layer;
    layer_descriptors.push_back({{"mediaType", gzip ? "application/vnd.oci.image.layer.v1.tar+gzip"
                                                    : "application/vnd.oci.image.layer.v1.tar"},
                                 {"digest", blob(stored)},
                                 {"size", stored.size()}});
  }
  const std::string config = json{{"architecture", "amd64"},
                                  {"os", "linux"},
                                  {"config", {{"Labels", {{"test", label}}}}},
                                  {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
                                 .dump();
  const std::string config_digest = blob(config);
  const std::string manifest = json{
      {"schemaVersion", 2},
      {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
      {"config",
       {{"mediaType", "application/vnd.oci.image.config.v1+json"},
        {"digest", config_digest},
        {"size", config.size()}}},
      {"layers",
       layer_descriptors}}.dump();
  const std::string manifest_digest = blob(manifest);
  json index = {{"schemaVersion", 2}, {"manifests", json::array()}};
  if (std::ifstream existing(dir / "index.json"); existing) {
    index = json::parse(existing);
    auto& list = index["manifests"];
    for (auto it = list.begin(); it != list.end();) {
      it = (*it)["annotations"]["org.opencontainers.image.ref.name"] == ref ? list.erase(it)
                                                                            : it + 1;
    }
  }
  index["manifests"].push_back({{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                                {"digest", manifest_digest},
                                {"size", manifest.size()},
                                {"annotations", {{"org.opencontainers.image.ref.name", ref}}}});
  std::ofstream(dir / "index.json") << index.dump();
  std::ofstream(dir / "oci-layout") << R"({"imageLayoutVersion":"1.0.0"})";
  return config_digest;
}

}  // namespace relay::testing
