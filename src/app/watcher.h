#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "app/change_set.h"
#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"

namespace relay::app {

struct WatcherSettings {
  /// A change is reported once no further event touched the same app for this long, so an
  /// editor's save (temp file, rename, chmod) or a `cp -r` is reloaded once, complete.
  std::chrono::milliseconds debounce{300};
  /// How deep below an app directory subdirectories are watched (handlers live in a/b.py).
  int max_depth = 4;
  /// Cap on watched directories per app; big vendored trees are not worth thousands of watches.
  std::size_t max_dirs_per_app = 256;
};

/// Watches an apps root with inotify and reports which apps changed. Not thread-safe: one
/// thread calls poll() (or waits on fd() and then calls poll(0)).
///
/// Watched: the root (apps added, removed, renamed) and each app directory with its
/// subdirectories (files created, written, deleted, renamed over, chmod-ed), except hidden
/// directories, node_modules and __pycache__. Events lost to a queue overflow, or a root that
/// disappeared, are reported as a rescan.
class Watcher {
 public:
  static Result<std::unique_ptr<Watcher>> create(std::filesystem::path root, Clock& clock,
                                                 WatcherSettings settings = {});
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  /// Readable when inotify events are waiting (for an external poll/epoll loop).
  int fd() const { return fd_.get(); }

  /// Waits up to `timeout` for file events (returns earlier when a debounce window ends, or when
  /// `wake_fd` is given and readable: it is not read), reads all that are queued, and returns
  /// the apps whose last change is at least `debounce` old by the clock. Blocks at most
  /// `timeout`.
  ChangeSet poll(std::chrono::milliseconds timeout, int wake_fd = -1);

  /// Whether some app changed but its debounce window has not ended yet.
  bool hasPending() const { return !pending_.empty() || rescan_; }

 private:
  struct WatchedDir {
    std::string app;  // empty for the root
    std::filesystem::path path;
    int depth = 0;
  };

  Watcher(UniqueFd fd, std::filesystem::path root, Clock& clock, WatcherSettings settings)
      : fd_(std::move(fd)), root_(std::move(root)), clock_(clock), settings_(settings) {}

  bool watchRoot();
  void watchApp(const std::string& app);
  void watchTree(const std::string& app, const std::filesystem::path& dir, int depth);
  void unwatchApp(const std::string& app);
  void unwatchAll();
  void drain();
  void handle(int wd, std::uint32_t mask, const std::string& name);
  void markChanged(const std::string& app);

  UniqueFd fd_;
  std::filesystem::path root_;
  Clock& clock_;
  WatcherSettings settings_;
  int root_wd_ = -1;
  std::map<int, WatchedDir> watches_;
  std::map<std::string, MonoTime> pending_;  // app -> time of its last event
  bool rescan_ = false;
};

}  // namespace relay::app
