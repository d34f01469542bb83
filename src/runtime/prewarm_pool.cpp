#include "runtime/prewarm_pool.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/thread_name.h"

namespace relay::runtime {
namespace {

using Sandboxes = std::vector<std::unique_ptr<WarmSandbox>>;

void moveAll(Sandboxes& from, Sandboxes& to) {
  for (auto& sandbox : from) to.push_back(std::move(sandbox));
  from.clear();
}

}  // namespace

std::string findLauncher(const std::string& configured) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path =
      configured.empty() ? fs::read_symlink("/proc/self/exe", ec).parent_path() / "relay-launcher"
                         : fs::path(configured);
  return !ec && ::access(path.c_str(), X_OK) == 0 ? path.string() : std::string();
}

std::string sandboxShape(const InvocationSpec& spec) {
  std::string env;  // a prewarmed interpreter starts with it
  for (const auto& [key, value] : spec.app_env) env += key + "=" + value + '\n';
  return env + spec.app + '\n' + spec.app_dir.string() + '\n' + languageName(spec.language) + '\n' +
         (spec.network ? "net" : "nonet") + '\n' + std::to_string(spec.resources.memory_bytes) +
         '\n' + std::to_string(spec.resources.cpus) + '\n' + std::to_string(spec.resources.pids) +
         '\n' + spec.image;
}

PrewarmPool::PrewarmPool(PrewarmSettings settings, Clock& clock, Starter starter)
    : settings_(settings), clock_(clock), starter_(std::move(starter)) {}

PrewarmPool::~PrewarmPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (warmer_.joinable()) warmer_.join();
  if (ticker_.joinable()) ticker_.join();
  Sandboxes dropped;
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, shape] : shapes_) moveAll(shape.ready, dropped);
  }
}  // `dropped` ends the sandboxes here, outside the lock

std::unique_ptr<WarmSandbox> PrewarmPool::take(const InvocationSpec& spec) {
  Sandboxes dropped;
  std::unique_ptr<WarmSandbox> taken;
  {
    std::lock_guard lock(mutex_);
    const MonoTime now = clock_.monotonicNow();
    const std::string key = sandboxShape(spec);
    auto [it, created] = shapes_.try_emplace(key);
    Shape& shape = it->second;
    if (created) {
      shape.app = spec.app;
      shape.spec = spec;
      shape.spec.input = {};  // nothing of this invocation: only its shape starts sandboxes
      shape.spec.message_id.clear();
      shape.spec.attempt = 1;
    }
    shape.arrivals.push_back(now);
    shape.last_arrival = now;
    while (!shape.ready.empty() && !taken) {
      std::unique_ptr<WarmSandbox> candidate = std::move(shape.ready.back());
      shape.ready.pop_back();
      if (candidate->alive()) {
        taken = std::move(candidate);
      } else {
        dropped.push_back(std::move(candidate));
      }
    }
    asked_ = true;
  }
  wake_.notify_all();
  return taken;
}

void PrewarmPool::forget(const std::string& app) {
  Sandboxes dropped;
  {
    std::lock_guard lock(mutex_);
    for (auto it = shapes_.begin(); it != shapes_.end();) {
      if (it->second.app != app) {
        ++it;
        continue;
      }
      moveAll(it->second.ready, dropped);
      // Sandboxes still starting for it are dropped when they arrive (their shape is gone).
      it = shapes_.erase(it);
    }
  }
}

std::size_t PrewarmPool::targetLocked(const Shape& shape, MonoTime now) const {
  if (now - shape.last_arrival >= settings_.idle_after) return 0;
  // One ready for the next arrival, plus the arrivals expected while one more starts.
  const auto window = std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.window);
  const auto expected = static_cast<std::size_t>(static_cast<double>(shape.arrivals.size()) *
                                                 static_cast<double>(start_cost_.count()) /
                                                 static_cast<double>(window.count()));
  return std::min(expected + 1, settings_.max_per_shape);
}

std::size_t PrewarmPool::totalLocked() const {
  std::size_t total = 0;
  for (const auto& [key, shape] : shapes_) total += shape.ready.size() + shape.starting;
  return total;
}

std::size_t PrewarmPool::maintain() {
  struct Job {
    std::string key;
    InvocationSpec spec;
  };
  std::vector<Job> jobs;
  Sandboxes dropped;
  {
    std::lock_guard lock(mutex_);
    const MonoTime now = clock_.monotonicNow();
    for (auto it = shapes_.begin(); it != shapes_.end();) {
      Shape& shape = it->second;
      while (!shape.arrivals.empty() && now - shape.arrivals.front() >= settings_.window) {
        shape.arrivals.pop_front();
      }
      if (settings_.max_age.count() > 0) {
        for (auto sandbox = shape.ready.begin(); sandbox != shape.ready.end();) {
          if (now - (*sandbox)->ready_since < settings_.max_age) {
            ++sandbox;
            continue;
          }
          dropped.push_back(std::move(*sandbox));
          sandbox = shape.ready.erase(sandbox);
        }
      }
      const std::size_t target = targetLocked(shape, now);
      while (shape.ready.size() > target) {
        dropped.push_back(std::move(shape.ready.back()));
        shape.ready.pop_back();
      }
      if (target == 0 && shape.starting == 0) {
        it = shapes_.erase(it);  // idle: scaled to zero
        continue;
      }
      ++it;
    }
    std::size_t total = totalLocked();
    for (auto& [key, shape] : shapes_) {
      const std::size_t target = targetLocked(shape, now);
      while (shape.ready.size() + shape.starting < target && total < settings_.max_total) {
        ++shape.starting;
        ++total;
        jobs.push_back({key, shape.spec});
      }
    }
  }
  dropped.clear();
  std::size_t started = 0;
  for (const Job& job : jobs) {
    const MonoTime before = clock_.monotonicNow();
    auto sandbox = starter_(job.spec);
    const auto cost = clock_.monotonicNow() - before;
    std::lock_guard lock(mutex_);
    start_cost_ = start_cost_.count() == 0 ? cost : (start_cost_ * 3 + cost) / 4;
    auto shape = shapes_.find(job.key);
    if (shape != shapes_.end()) --shape->second.starting;
    if (!sandbox.ok()) continue;  // the next cold start reports why
    ++started;
    if (shape == shapes_.end()) {
      dropped.push_back(std::move(sandbox).value());  // forgotten meanwhile
    } else {
      (*sandbox)->ready_since = clock_.monotonicNow();
      shape->second.ready.push_back(std::move(sandbox).value());
    }
  }
  return started;
}

void PrewarmPool::startWarmer() {
  std::lock_guard lock(mutex_);
  if (warmer_.joinable() || !settings_.background) return;
  // The threads start with every signal blocked (they inherit the mask): a process that takes
  // SIGTERM with sigwait() on one thread, blocking it only after the runtime was made, must not
  // have it delivered here, where its default action would end the process.
  sigset_t all, previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  warmer_ = namedThread("relay-warmer", [this] { warmerLoop(); });
  ticker_ = namedThread("relay-ticker", [this] { tickerLoop(); });
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void PrewarmPool::warmerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || asked_; });
    if (stopping_) return;
    asked_ = false;
    lock.unlock();
    maintain();
    lock.lock();
  }
}

void PrewarmPool::tickerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !shapes_.empty(); });
    if (stopping_) return;
    lock.unlock();
    clock_.sleepFor(settings_.tick);
    lock.lock();
    asked_ = true;
    wake_.notify_all();
  }
}

std::size_t PrewarmPool::ready(const std::string& app) const {
  std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (const auto& [key, shape] : shapes_) {
    if (shape.app == app) count += shape.ready.size();
  }
  return count;
}

std::size_t PrewarmPool::readyTotal() const {
  std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (const auto& [key, shape] : shapes_) count += shape.ready.size();
  return count;
}

std::size_t PrewarmPool::target(const InvocationSpec& spec) const {
  std::lock_guard lock(mutex_);
  const auto shape = shapes_.find(sandboxShape(spec));
  return shape == shapes_.end() ? 0 : targetLocked(shape->second, clock_.monotonicNow());
}

}  // namespace relay::runtime
