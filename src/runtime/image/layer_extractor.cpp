#include "runtime/image/layer_extractor.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "common/c_free.h"

namespace relay::runtime::image {
namespace {

constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaqueMarker = ".wh..wh..opq";

Error failure(const std::string& what, const std::string& path, int error_number) {
  return Error::internal(what + " " + (path.empty() ? "/" : "/" + path) + ": " +
                         std::strerror(error_number));
}

// `path` inside the directory `root` as if `root` were `/` (openat2 RESOLVE_IN_ROOT, Linux 5.6+):
// no `..`, absolute symlink or symlinked parent resolves outside it.
int openInRoot(int root, const std::string& path, int flags) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const char* relative = path.empty() ? "." : path.c_str();
  while (true) {
    const long fd = ::syscall(SYS_openat2, root, relative, &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) return static_cast<int>(fd);  // EAGAIN: a rename raced
  }
}

std::pair<std::string, std::string> splitParent(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string joinMember(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

}  // namespace

Result<std::string> cleanMemberPath(std::string_view path) {
  if (path.size() > PATH_MAX) return Error::invalid("member path longer than PATH_MAX");
  if (path.find('\0') != std::string_view::npos) return Error::invalid("member path has a NUL");
  std::string clean;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      return Error::invalid("member path " + std::string(path) + " has a '..' part");
    }
    if (!clean.empty()) clean += '/';
    clean.append(part);
  }
  return clean;
}

Status removeTree(int parent, const std::string& name) {
  struct stat info {};
  if (::fstatat(parent, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status{} : failure("cannot look at", name, errno);
  }
  if (S_ISDIR(info.st_mode)) {
    const int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return failure("cannot open", name, errno);
    std::unique_ptr<DIR, CFree<::closedir>> dir(::fdopendir(fd));
    if (!dir) {
      ::close(fd);
      return failure("cannot list", name, errno);
    }
    std::vector<std::string> children;
    while (const dirent* child = ::readdir(dir.get())) {
      const std::string_view entry = child->d_name;
      if (entry != "." && entry != "..") children.emplace_back(entry);
    }
    for (const std::string& child : children) {
      if (auto status = removeTree(::dirfd(dir.get()), child); !status) return status;
    }
    if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) {
      return failure("cannot remove", name, errno);
    }
    return {};
  }
  if (::unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) {
    return failure("cannot remove", name, errno);
  }
  return {};
}

LayerExtractor::LayerExtractor(UniqueFd root, std::uint64_t max_bytes)
    : root_(std::move(root)), max_bytes_(max_bytes), as_root_(::geteuid() == 0) {}

void LayerExtractor::beginLayer() {
  layer_paths_.clear();
  pending_modes_.clear();
}

Status LayerExtractor::endLayer() {
  // Deepest first: a directory without write permission no longer matters once its children
  // are done.
  for (auto it = pending_modes_.rbegin(); it != pending_modes_.rend(); ++it) {
    UniqueFd dir(openInRoot(root_.get(), it->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    if (!dir.valid()) {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) continue;  // replaced later on
      return failure("cannot open", it->path, errno);
    }
    if (::fchmod(dir.get(), it->mode) != 0) return failure("cannot chmod", it->path, errno);
  }
  pending_modes_.clear();
  return {};
}

Result<UniqueFd> LayerExtractor::directory(const std::string& path, bool create) {
  UniqueFd fd(openInRoot(root_.get(), path, O_PATH | O_DIRECTORY));
  if (fd.valid()) return fd;
  if (errno != ENOENT || !create || path.empty()) return failure("cannot open", path, errno);
  const auto [parent_path, name] = splitParent(path);
  auto parent = directory(parent_path, true);
  if (!parent) return parent.error();
  if (::mkdirat(parent->get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
    return failure("cannot make", path, errno);
  }
  fd.reset(openInRoot(root_.get(), path, O_PATH | O_DIRECTORY));
  if (!fd.valid()) return failure("cannot open", path, errno);
  return fd;
}

Status LayerExtractor::whiteout(int parent, const std::string& dir, const std::string& name) {
  if (name.empty() || name == "." || name == "..") {
    return Error::invalid("whiteout " + joinMember(dir, std::string(kWhiteoutPrefix) + name) +
                          " names nothing");
  }
  return removeTree(parent, name);
}

Status LayerExtractor::opaque(const std::string& dir) {
  UniqueFd fd(openInRoot(root_.get(), dir, O_RDONLY | O_DIRECTORY));
  if (!fd.valid()) return failure("cannot open", dir, errno);
  const int listing = ::dup(fd.get());
  std::unique_ptr<DIR, CFree<::closedir>> list(listing >= 0 ? ::fdopendir(listing) : nullptr);
  if (!list) {
    if (listing >= 0) ::close(listing);
    return failure("cannot list", dir, errno);
  }
  std::vector<std::string> hidden;
  while (const dirent* child = ::readdir(list.get())) {
    const std::string name = child->d_name;
    if (name == "." || name == "..") continue;
    if (layer_paths_.count(joinMember(dir, name)) == 0) hidden.push_back(name);
  }
  for (const std::string& name : hidden) {
    if (auto status = removeTree(fd.get(), name); !status) return status;
  }
  return {};
}

Status LayerExtractor::clear(int parent, const std::string& name, TarEntry::Type type) {
  struct stat info {};
  if (::fstatat(parent, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status{} : failure("cannot look at", current_, errno);
  }
  if (S_ISDIR(info.st_mode) && type == TarEntry::Type::kDirectory) return {};
  return removeTree(parent, name);
}

void LayerExtractor::setOwner(int parent, const std::string& name, const TarEntry& entry) const {
  // Unprivileged, everything stays Relay's: the sandbox reads it through the permission bits.
  if (as_root_) (void)::fchownat(parent, name.c_str(), entry.uid, entry.gid, AT_SYMLINK_NOFOLLOW);
}

Status LayerExtractor::entry(const TarEntry& entry) {
  auto clean = cleanMemberPath(entry.path);
  if (!clean) return clean.error();
  current_ = *clean;
  if (clean->empty()) return {};  // the root itself keeps Relay's mode
  const auto [dir, name] = splitParent(*clean);
  auto parent = directory(dir, true);
  if (!parent) return parent.error();
  const int at = parent->get();
  if (name == kOpaqueMarker) return opaque(dir);
  if (name.rfind(kWhiteoutPrefix, 0) == 0) {
    return whiteout(at, dir, name.substr(kWhiteoutPrefix.size()));
  }
  layer_paths_.insert(*clean);
  // No set-user-ID or set-group-ID program in a cache that sandboxes run from.
  const mode_t mode = entry.mode & 01777;
  switch (entry.type) {
    case TarEntry::Type::kFile: {
      if (auto status = clear(at, name, entry.type); !status) return status;
      file_.reset(
          ::openat(at, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!file_.valid()) return failure("cannot create", *clean, errno);
      if (as_root_) (void)::fchown(file_.get(), entry.uid, entry.gid);
      if (::fchmod(file_.get(), mode) != 0) return failure("cannot chmod", *clean, errno);
      mtime_ = entry.mtime;
      return {};
    }
    case TarEntry::Type::kDirectory: {
      if (auto status = clear(at, name, entry.type); !status) return status;
      if (::mkdirat(at, name.c_str(), 0755) != 0 && errno != EEXIST) {
        return failure("cannot make", *clean, errno);
      }
      setOwner(at, name, entry);
      pending_modes_.push_back({*clean, mode});
      return {};
    }
    case TarEntry::Type::kSymlink: {
      if (auto status = clear(at, name, entry.type); !status) return status;
      if (::symlinkat(entry.link.c_str(), at, name.c_str()) != 0) {
        return failure("cannot make the symlink", *clean, errno);
      }
      setOwner(at, name, entry);
      return {};
    }
    case TarEntry::Type::kHardLink: {
      auto target = cleanMemberPath(entry.link);
      if (!target) return target.error();
      UniqueFd source(openInRoot(root_.get(), *target, O_PATH | O_NOFOLLOW));
      if (!source.valid()) return failure("hard link " + *clean + " to", *target, errno);
      if (auto status = clear(at, name, entry.type); !status) return status;
      // Through the descriptor: the link can only name what the root holds. linkat's
      // AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH; the /proc path does not.
      const std::string by_fd = "/proc/self/fd/" + std::to_string(source.get());
      if (::linkat(AT_FDCWD, by_fd.c_str(), at, name.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        return failure("cannot hard-link", *clean, errno);
      }
      return {};
    }
    case TarEntry::Type::kFifo: {
      if (auto status = clear(at, name, entry.type); !status) return status;
      if (::mkfifoat(at, name.c_str(), mode) != 0) return failure("cannot make", *clean, errno);
      setOwner(at, name, entry);
      return {};
    }
    case TarEntry::Type::kCharDevice:
    case TarEntry::Type::kBlockDevice:
      return {};
  }
  return {};
}

Status LayerExtractor::ensureRegularFile(const std::string& path) {
  auto clean = cleanMemberPath(path);
  if (!clean) return clean.error();
  const auto [dir, name] = splitParent(*clean);
  auto parent = directory(dir, true);
  if (!parent) return parent.error();
  struct stat info {};
  if (::fstatat(parent->get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISREG(info.st_mode)) {
    return {};
  }
  if (auto status = removeTree(parent->get(), name); !status) return status;
  UniqueFd file(::openat(parent->get(), name.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!file.valid()) return failure("cannot create", *clean, errno);
  return {};
}

Status LayerExtractor::data(std::string_view bytes) {
  if (!file_.valid()) return {};
  if (bytes.size() > max_bytes_ - std::min(max_bytes_, written_)) {
    return Error::unavailable("the image's files exceed the image cache's limit of " +
                              std::to_string(max_bytes_) + " bytes");
  }
  written_ += bytes.size();
  while (!bytes.empty()) {
    const ssize_t n = ::write(file_.get(), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failure("cannot write", current_, errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Status LayerExtractor::end() {
  if (!file_.valid()) return {};
  // The source's time, as the image has it: Python checks its byte-code caches against it.
  const timespec times[2] = {{mtime_, 0}, {mtime_, 0}};
  (void)::futimens(file_.get(), times);
  file_.reset();
  return {};
}

}  // namespace relay::runtime::image
