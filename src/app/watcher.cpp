#include "app/watcher.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace relay::app {
namespace {

constexpr std::uint32_t kRootMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                                    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
// IN_ATTRIB: `chmod +x` decides whether an exec handler is runnable.
constexpr std::uint32_t kAppMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE |
                                   IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR;

bool skipped(const std::string& name) {
  return name.empty() || name.front() == '.' || name == "node_modules" || name == "__pycache__";
}

}  // namespace

Result<std::unique_ptr<Watcher>> Watcher::create(std::filesystem::path root, Clock& clock,
                                                 WatcherSettings settings) {
  UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd.valid()) return Error::io(std::string("inotify_init1: ") + std::strerror(errno));
  std::unique_ptr<Watcher> watcher(new Watcher(std::move(fd), std::move(root), clock, settings));
  if (!watcher->watchRoot()) {
    return Error::io("cannot watch apps root " + watcher->root_.string() + ": " +
                     std::strerror(errno));
  }
  return watcher;
}

Watcher::~Watcher() = default;

bool Watcher::watchRoot() {
  const int wd = ::inotify_add_watch(fd_.get(), root_.c_str(), kRootMask);
  if (wd < 0) return false;
  root_wd_ = wd;
  watches_[wd] = {"", root_, 0};
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!skipped(name) && it->is_directory(ec)) watchApp(name);
  }
  return true;
}

void Watcher::watchApp(const std::string& app) { watchTree(app, root_ / app, 0); }

void Watcher::watchTree(const std::string& app, const std::filesystem::path& dir, int depth) {
  const auto count = std::count_if(watches_.begin(), watches_.end(),
                                   [&app](const auto& entry) { return entry.second.app == app; });
  if (static_cast<std::size_t>(count) >= settings_.max_dirs_per_app) return;
  const int wd = ::inotify_add_watch(fd_.get(), dir.c_str(), kAppMask);
  if (wd < 0) return;  // gone already, or not a directory: the app's reload will tell
  watches_[wd] = {app, dir, depth};
  if (depth >= settings_.max_depth) return;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // Symlinked subdirectories are not followed: they could loop or leave the app.
    if (!skipped(it->path().filename().string()) && !it->is_symlink(ec) && it->is_directory(ec)) {
      watchTree(app, it->path(), depth + 1);
    }
  }
}

void Watcher::unwatchApp(const std::string& app) {
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.app == app && it->first != root_wd_) {
      ::inotify_rm_watch(fd_.get(), it->first);
      it = watches_.erase(it);
    } else {
      ++it;
    }
  }
}

void Watcher::unwatchAll() {
  for (const auto& [wd, dir] : watches_) ::inotify_rm_watch(fd_.get(), wd);
  watches_.clear();
  root_wd_ = -1;
}

void Watcher::markChanged(const std::string& app) { pending_[app] = clock_.monotonicNow(); }

void Watcher::handle(int wd, std::uint32_t mask, const std::string& name) {
  if (mask & IN_Q_OVERFLOW) {
    rescan_ = true;
    return;
  }
  const auto it = watches_.find(wd);
  if (it == watches_.end()) return;
  const WatchedDir watched = it->second;
  if (mask & IN_IGNORED) {  // the watch is gone (directory deleted or unwatched)
    watches_.erase(it);
    if (wd == root_wd_) {
      root_wd_ = -1;
      rescan_ = true;
    }
    return;
  }
  if (wd == root_wd_) {
    if (mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
      rescan_ = true;
      return;
    }
    if (skipped(name)) return;
    markChanged(name);
    if (mask & (IN_DELETE | IN_MOVED_FROM | IN_CREATE | IN_MOVED_TO)) unwatchApp(name);
    std::error_code ec;
    if ((mask & (IN_CREATE | IN_MOVED_TO)) && std::filesystem::is_directory(root_ / name, ec)) {
      watchApp(name);
    }
    return;
  }
  markChanged(watched.app);
  if ((mask & IN_ISDIR) && (mask & (IN_CREATE | IN_MOVED_TO)) && !skipped(name) &&
      watched.depth < settings_.max_depth) {
    watchTree(watched.app, watched.path / name, watched.depth + 1);
  }
}

void Watcher::drain() {
  alignas(inotify_event) char buffer[64 * 1024];
  while (true) {
    const ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: nothing more queued
    for (ssize_t offset = 0; offset < n;) {
      inotify_event event;
      std::memcpy(&event, buffer + offset, sizeof event);
      const char* name_start = buffer + offset + sizeof(inotify_event);
      const std::string name =
          event.len > 0 ? std::string(name_start, ::strnlen(name_start, event.len)) : "";
      handle(event.wd, event.mask, name);
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event.len);
    }
  }
}

ChangeSet Watcher::poll(std::chrono::milliseconds timeout, int wake_fd) {
  if (root_wd_ < 0 && watchRoot()) rescan_ = true;  // the root came back
  drain();
  std::chrono::milliseconds wait = std::max(timeout, std::chrono::milliseconds(0));
  if (!pending_.empty()) {
    MonoTime earliest = MonoTime::max();
    for (const auto& [app, last] : pending_) earliest = std::min(earliest, last);
    const auto until = std::chrono::ceil<std::chrono::milliseconds>(earliest + settings_.debounce -
                                                                    clock_.monotonicNow());
    wait = std::clamp(until, std::chrono::milliseconds(0), wait);
  }
  if (rescan_) wait = std::chrono::milliseconds(0);
  if (wait.count() > 0) {
    pollfd descriptors[] = {{fd_.get(), POLLIN, 0}, {wake_fd, POLLIN, 0}};  // -1: ignored
    const auto millis = std::min<std::chrono::milliseconds::rep>(wait.count(), 60'000);
    if (::poll(descriptors, 2, static_cast<int>(millis)) > 0 && descriptors[0].revents != 0) {
      drain();
    }
  }
  ChangeSet changes;
  if (rescan_) {
    // Everything is re-read, so per-app changes are covered; the watches are rebuilt because
    // lost events may have hidden new directories.
    rescan_ = false;
    changes.rescan = true;
    pending_.clear();
    unwatchAll();
    watchRoot();
    return changes;
  }
  const MonoTime now = clock_.monotonicNow();
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now - it->second >= settings_.debounce) {
      changes.apps.insert(it->first);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return changes;
}

}  // namespace relay::app
