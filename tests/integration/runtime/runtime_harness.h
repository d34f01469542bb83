#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/system_clock.h"
#include "fakes/temp_dir.h"
#include "runtime/runtime.h"

namespace relay::runtime::testing {

/// Collects a handler's prefixed output lines, and when the runtime reported its start.
class CollectingSink final : public OutputSink {
 public:
  void line(std::string_view text) override {
    std::lock_guard lock(mutex_);
    lines_.emplace_back(text);
  }
  void started() override {
    std::lock_guard lock(mutex_);
    ++started_;
    lines_before_start_ = lines_.size();
  }
  /// How many times started() was called.
  int startedCount() const {
    std::lock_guard lock(mutex_);
    return started_;
  }
  /// How many lines had arrived when started() was called.
  std::size_t linesBeforeStart() const {
    std::lock_guard lock(mutex_);
    return lines_before_start_;
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  /// Every line with the prefix removed, joined by `separator`.
  std::string text(const std::string& prefix, const std::string& separator = "\n") const {
    std::string joined;
    bool first = true;
    for (const std::string& line : lines()) {
      if (!first) joined += separator;
      first = false;
      joined += line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : line;
    }
    return joined;
  }
  bool contains(std::string_view needle) const {
    for (const std::string& line : lines()) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
  int started_ = 0;
  std::size_t lines_before_start_ = 0;
};

/// An app directory the sandbox user can read (mkdtemp makes 0700 directories).
class TestApp {
 public:
  TestApp() { ::chmod(dir_.path().c_str(), 0755); }
  void script(const std::string& relative, const std::string& body) {
    dir_.write(relative, "#!/bin/sh\n" + body + "\n", 0755);
    makeReadable();
  }
  void file(const std::string& relative, const std::string& content) {
    dir_.write(relative, content, 0644);
    makeReadable();
  }
  InvocationSpec spec(Language language, const std::string& handler) const {
    InvocationSpec s;
    s.app = "testapp";
    s.app_dir = dir_.path();
    s.language = language;
    s.handler = handler;
    s.message_id = uniqueMessageId();
    s.timeout = std::chrono::seconds(20);
    s.input = "{}";
    return s;
  }
  const std::filesystem::path& path() const { return dir_.path(); }
  /// `<pid>-<test name>`: the invocation id of two tests running at once (ctest -j2) never
  /// collide, so the docker runtime's removal of an invocation's earlier containers
  /// (ContainerReaper::reapInvocation) never ends another test's handler.
  static std::string uniqueMessageId() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::to_string(::getpid()) + "-" + (info != nullptr ? info->name() : "setup");
  }

 private:
  void makeReadable() {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path())) {
      if (entry.is_directory()) ::chmod(entry.path().c_str(), 0755);
    }
  }
  relay::testing::TempDir dir_;
};

/// The backend under test, chosen at compile time so one contract suite covers each.
std::unique_ptr<Runtime> makeRuntime(Clock& clock);

}  // namespace relay::runtime::testing
