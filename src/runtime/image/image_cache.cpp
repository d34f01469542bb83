#include "runtime/image/image_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "common/whole_number.h"
#include "runtime/docker/docker_api.h"
#include "runtime/image/image_layers.h"
#include "runtime/image/layer_extractor.h"
#include "runtime/image/sha256.h"

namespace relay::runtime::image {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kOciScheme = "oci:";
constexpr std::chrono::minutes kExportTimeout{10};

Error imageUnavailable(const std::string& reference, const std::string& why) {
  return Error::unavailable("image " + reference + ": " + why);
}

// Disk use of a tree as du(1) counts it: allocated blocks, each inode once.
std::uint64_t diskUse(const fs::path& root) {
  std::uint64_t bytes = 0;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat info {};
    if (::lstat(it->path().c_str(), &info) != 0) continue;
    if (info.st_nlink > 1 && !seen.insert({info.st_dev, info.st_ino}).second) continue;
    bytes += static_cast<std::uint64_t>(info.st_blocks) * 512;
  }
  return bytes;
}

bool isEntryName(std::string_view name) {
  return name.size() == 64 && isSha256Digest("sha256:" + std::string(name));
}

// The pid in `.staging-<pid>-<n>` / `.evict-<pid>-<n>`; 0 when the name is not one.
pid_t scratchOwner(std::string_view name) {
  for (const std::string_view prefix : {".staging-", ".evict-"}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    name.remove_prefix(prefix.size());
    pid_t pid = 0;
    return parseWholeNumber(name.substr(0, name.find('-')), pid) ? pid : 0;
  }
  return 0;
}

struct EntryInfo {
  std::string digest;
  std::uint64_t bytes = 0;
  std::chrono::milliseconds unpack_time{0};
};

std::optional<EntryInfo> readEntryInfo(const fs::path& entry) {
  std::ifstream in(entry / "image.json");
  if (!in) return std::nullopt;
  const json info = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) return std::nullopt;
  EntryInfo result;
  result.digest = info.value("digest", std::string());
  result.bytes = info.value("bytes", std::uint64_t{0});
  result.unpack_time = std::chrono::milliseconds(info.value("unpack_ms", std::int64_t{0}));
  return result;
}

std::vector<ImageRoot::TopEntry> listTopLevel(const fs::path& rootfs) {
  std::vector<ImageRoot::TopEntry> top;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(rootfs, ec)) {
    ImageRoot::TopEntry item{entry.path().filename().string(), {}};
    if (entry.is_symlink(ec)) item.symlink = fs::read_symlink(entry.path(), ec).string();
    top.push_back(std::move(item));
  }
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return top;
}

}  // namespace

Result<ImageReference> parseImageReference(std::string_view text) {
  ImageReference reference;
  if (text.substr(0, kOciScheme.size()) != kOciScheme) {
    reference.name = std::string(text);
    return reference;
  }
  reference.kind = ImageReference::Kind::kOciLayout;
  std::string_view rest = text.substr(kOciScheme.size());
  if (rest.empty() || rest.front() != '/') {
    return Error::invalid("an OCI layout reference is oci:/absolute/dir[:ref], got " +
                          std::string(text));
  }
  // oci:DIR:REF as skopeo writes it: the reference follows the last ':' (directories with a ':'
  // in their name cannot be named).
  const std::size_t colon = rest.find(':');
  reference.name = std::string(rest.substr(0, colon));
  if (colon != std::string_view::npos) reference.ref = std::string(rest.substr(colon + 1));
  return reference;
}

Result<std::unique_ptr<ImageCache>> ImageCache::create(ImageCacheSettings settings, Clock& clock,
                                                       const docker::DockerApi* daemon) {
  std::error_code ec;
  fs::create_directories(settings.dir, ec);
  if (ec) {
    return Error::unavailable("cannot make the image cache " + settings.dir.string() + ": " +
                              ec.message() + " (RELAY_IMAGE_CACHE)");
  }
  // The sandbox user (bwrap runs as it) must reach the roots below.
  ::chmod(settings.dir.c_str(), 0755);
  for (const fs::directory_entry& entry : fs::directory_iterator(settings.dir, ec)) {
    const pid_t owner = scratchOwner(entry.path().filename().string());
    if (owner == 0) continue;
    if (owner == ::getpid() || (::kill(owner, 0) != 0 && errno == ESRCH)) {
      UniqueFd dir(::open(settings.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      (void)removeTree(dir.get(), entry.path().filename().string());
    }
  }
  return std::unique_ptr<ImageCache>(new ImageCache(std::move(settings), clock, daemon));
}

fs::path ImageCache::scratch(std::string_view kind) {
  std::lock_guard lock(mutex_);
  return settings_.dir / ("." + std::string(kind) + "-" + std::to_string(::getpid()) + "-" +
                          std::to_string(++scratch_counter_));
}

Result<std::string> ImageCache::resolve(const ImageReference& reference) const {
  if (reference.kind == ImageReference::Kind::kOciLayout) {
    auto digest = ociLayoutDigest(reference.name, reference.ref);
    if (!digest) return Error::unavailable(digest.error().message);
    return digest;
  }
  if (daemon_ == nullptr) {
    return Error::unavailable("no docker daemon to take it from (DOCKER_HOST)");
  }
  auto id = daemon_->imageId(reference.name);
  if (!id) return Error::unavailable(id.error().message);
  if (!*id) {
    return Error::unavailable(
        "not present in the docker daemon (no registry is reached: load it with docker load, or "
        "name an OCI image layout as oci:/dir)");
  }
  if (!isSha256Digest(**id)) return Error::unavailable("the daemon gave image ID " + **id);
  return **id;
}

Result<std::shared_ptr<const ImageRoot>> ImageCache::open(const std::string& digest) const {
  const fs::path entry = settings_.dir / digest.substr(7);
  const fs::path lock_path = entry / "lock";
  UniqueFd lock(::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!lock.valid()) {
    if (errno == ENOENT) return std::shared_ptr<const ImageRoot>();
    return Error::unavailable("cannot open " + lock_path.string() + ": " + std::strerror(errno));
  }
  // Shared: an eviction (exclusive) waits for no one and skips what is held.
  while (::flock(lock.get(), LOCK_SH) != 0) {
    if (errno != EINTR) {
      return Error::unavailable("cannot lock " + lock_path.string() + ": " + std::strerror(errno));
    }
  }
  struct stat held {
  }, now{};
  if (::fstat(lock.get(), &held) != 0 || ::stat(lock_path.c_str(), &now) != 0 ||
      held.st_ino != now.st_ino || held.st_dev != now.st_dev) {
    return std::shared_ptr<const ImageRoot>();  // evicted between the open and the lock
  }
  const auto info = readEntryInfo(entry);
  if (!info || info->digest != digest) {
    return Error::unavailable("the image cache entry " + entry.string() + " is damaged");
  }
  (void)::futimens(lock.get(), nullptr);  // last used: now (the eviction order)
  return std::make_shared<const ImageRoot>(digest, entry / "rootfs", info->bytes,
                                           listTopLevel(entry / "rootfs"), std::move(lock));
}

Result<std::shared_ptr<const ImageRoot>> ImageCache::acquire(const std::string& text) {
  auto reference = parseImageReference(text);
  if (!reference) return imageUnavailable(text, reference.error().message);
  const MonoTime now = clock_.monotonicNow();
  {
    std::lock_guard lock(mutex_);
    const auto it = resolved_.find(text);
    if (it != resolved_.end() && now - it->second.at < settings_.resolve_ttl)
      return it->second.root;
  }
  auto digest = resolve(*reference);
  if (!digest) return imageUnavailable(text, digest.error().message);
  auto root = open(*digest);
  if (root && !*root) {
    std::lock_guard unpacking(unpack_mutex_);
    root = open(*digest);  // another thread may have unpacked it meanwhile
    if (root && !*root) {
      if (auto status = unpack(*reference, *digest); !status) {
        return imageUnavailable(text, status.error().message);
      }
      root = open(*digest);
      if (root && !*root) root = Error::unavailable("evicted as soon as it was unpacked");
    }
  }
  if (!root) return imageUnavailable(text, root.error().message);
  std::lock_guard lock(mutex_);
  resolved_[text] = {*root, now};
  return *root;
}

Status ImageCache::unpack(const ImageReference& reference, const std::string& digest) {
  const MonoTime started = clock_.monotonicNow();
  const fs::path staging = scratch("staging");
  UniqueFd cache(::open(settings_.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  // Whatever happens, the staging directory goes (it is renamed away on success).
  struct Cleanup {
    int dir;
    std::string name;
    ~Cleanup() { (void)removeTree(dir, name); }
  } cleanup{cache.get(), staging.filename().string()};
  std::error_code ec;
  fs::create_directories(staging / "rootfs", ec);
  if (ec) return Error::unavailable("cannot make " + staging.string() + ": " + ec.message());

  Result<ImageLayers> layers = Error::internal("unread");
  if (reference.kind == ImageReference::Kind::kOciLayout) {
    layers = readOciLayout(reference.name, reference.ref);
    if (layers && layers->digest != digest) {
      return Error::unavailable("the layout changed while it was read (digest " + layers->digest +
                                ", expected " + digest + ")");
    }
  } else {
    fs::create_directories(staging / "export", ec);
    ArchiveStager stager(staging / "export");
    TarReader reader(stager);
    auto exported = daemon_->exportImage(
        digest, [&reader](std::string_view bytes) { return reader.feed(bytes); },
        clock_.monotonicNow() + kExportTimeout);
    if (!exported) return exported;
    if (auto status = reader.finish(); !status) return status;
    layers = readDockerArchive(staging / "export", digest);
  }
  if (!layers) return layers.error();

  std::uint64_t estimate = 0;
  for (const LayerBlob& layer : layers->layers) estimate += fs::file_size(layer.file, ec);
  if (estimate > settings_.max_bytes) {
    return Error::unavailable("its layers take " + std::to_string(estimate) +
                              " bytes, more than the image cache's limit of " +
                              std::to_string(settings_.max_bytes) + " (RELAY_IMAGE_CACHE_SIZE)");
  }
  if (auto room = makeRoom(estimate, digest); !room) return room;
  {
    UniqueFd rootfs(::open((staging / "rootfs").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    LayerExtractor extractor(std::move(rootfs), settings_.max_bytes);
    if (auto status = applyLayers(*layers, extractor); !status) return status;
    // Mount points of the sandbox's own network files (docs/runtimes.md "network: true").
    for (const char* file : {"etc/resolv.conf", "etc/hosts"}) {
      if (auto status = extractor.ensureRegularFile(file); !status) return status;
    }
  }
  fs::remove_all(staging / "export", ec);
  const std::uint64_t bytes = diskUse(staging / "rootfs");
  if (bytes > settings_.max_bytes) {
    return Error::unavailable("its files take " + std::to_string(bytes) +
                              " bytes, more than the image cache's limit of " +
                              std::to_string(settings_.max_bytes) + " (RELAY_IMAGE_CACHE_SIZE)");
  }
  if (bytes > estimate) {
    if (auto room = makeRoom(bytes, digest); !room) return room;
  }
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.monotonicNow() - started);
  {
    std::ofstream info(staging / "image.json");
    info << json{{"digest", digest}, {"bytes", bytes}, {"unpack_ms", took.count()}}.dump() << "\n";
    std::ofstream lock(staging / "lock");
    if (!info || !lock) return Error::unavailable("cannot write to " + staging.string());
  }
  ::chmod(staging.c_str(), 0755);
  ::chmod((staging / "rootfs").c_str(), 0755);
  const fs::path entry = settings_.dir / digest.substr(7);
  if (::rename(staging.c_str(), entry.c_str()) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
    return Error::unavailable("cannot move " + staging.string() + " to " + entry.string() + ": " +
                              std::strerror(errno));
  }
  return {};  // EEXIST: another process unpacked the same digest first; its entry serves
}

Status ImageCache::makeRoom(std::uint64_t incoming, const std::string& keep) {
  {
    // Names not asked for within the TTL no longer hold their images.
    std::lock_guard lock(mutex_);
    const MonoTime now = clock_.monotonicNow();
    std::erase_if(resolved_,
                  [&](const auto& item) { return now - item.second.at >= settings_.resolve_ttl; });
  }
  std::vector<CachedImage> images = entries();
  std::uint64_t total = 0;
  for (const CachedImage& image : images) total += image.bytes;
  UniqueFd cache(::open(settings_.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  for (const CachedImage& image : images) {
    if (total + incoming <= settings_.max_bytes) break;
    if (image.digest == keep) continue;
    const fs::path entry = settings_.dir / image.digest.substr(7);
    UniqueFd lock(::open((entry / "lock").c_str(), O_RDONLY | O_CLOEXEC));
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;  // in use
    const fs::path doomed = scratch("evict");
    if (::rename(entry.c_str(), doomed.c_str()) != 0) continue;
    lock.reset();
    (void)removeTree(cache.get(), doomed.filename().string());
    total -= std::min(total, image.bytes);
  }
  if (total + incoming > settings_.max_bytes) {
    return Error::unavailable("the image cache " + settings_.dir.string() + " has no room for " +
                              std::to_string(incoming) + " more bytes: images in use take " +
                              std::to_string(total) + " of its " +
                              std::to_string(settings_.max_bytes) + " (RELAY_IMAGE_CACHE_SIZE)");
  }
  return {};
}

std::vector<CachedImage> ImageCache::entries() const {
  std::vector<CachedImage> images;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(settings_.dir, ec)) {
    if (!isEntryName(entry.path().filename().string())) continue;
    const auto info = readEntryInfo(entry.path());
    if (!info) continue;
    CachedImage image;
    image.digest = info->digest;
    image.bytes = info->bytes;
    image.unpack_time = info->unpack_time;
    image.last_used = fs::last_write_time(entry.path() / "lock", ec);
    images.push_back(std::move(image));
  }
  std::sort(images.begin(), images.end(),
            [](const CachedImage& a, const CachedImage& b) { return a.last_used < b.last_used; });
  return images;
}

}  // namespace relay::runtime::image
