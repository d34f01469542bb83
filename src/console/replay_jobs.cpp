#include "console/replay_jobs.h"

#include "dlq/dead_letter_queue.h"
#include "dlq/replayer.h"

namespace relay::console {
namespace {

constexpr std::size_t kKeptJobs = 32;
constexpr std::size_t kOutputTail = 4096;

/// Keeps the last kOutputTail bytes of a replayed handler's output.
class TailSink final : public runtime::OutputSink {
 public:
  void line(std::string_view prefixed_line) override {
    text_.append(prefixed_line);
    text_ += '\n';
    if (text_.size() > 2 * kOutputTail) text_.erase(0, text_.size() - kOutputTail);
  }
  std::string tail() const {
    return text_.size() > kOutputTail ? text_.substr(text_.size() - kOutputTail) : text_;
  }

 private:
  std::string text_;
};

const char* verdictName(dlq::ReplayResult::Verdict verdict) {
  switch (verdict) {
    case dlq::ReplayResult::Verdict::kSucceeded:
      return "succeeded";
    case dlq::ReplayResult::Verdict::kFailed:
      return "failed";
    case dlq::ReplayResult::Verdict::kRefused:
      return "refused";
    case dlq::ReplayResult::Verdict::kNotRunnable:
      return "not_runnable";
    case dlq::ReplayResult::Verdict::kRemoveFailed:
      return "remove_failed";
  }
  return "not_runnable";
}

}  // namespace

ReplayJobs::ReplayJobs(ConnectionPool& pool, AppsView& apps, std::string dlq_key,
                       std::size_t max_event_bytes)
    : pool_(pool),
      apps_(apps),
      dlq_key_(std::move(dlq_key)),
      max_event_bytes_(max_event_bytes),
      thread_([this] { loop(); }) {}

ReplayJobs::~ReplayJobs() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t ReplayJobs::start(std::vector<std::string> ids) {
  std::lock_guard lock(mutex_);
  const std::uint64_t number = ++next_;
  jobs_[number] = Job{number, std::move(ids), {}, false};
  while (jobs_.size() > kKeptJobs) jobs_.erase(jobs_.begin());
  queue_.push_back(number);
  wake_.notify_one();
  return number;
}

std::optional<nlohmann::ordered_json> ReplayJobs::status(std::uint64_t number) const {
  std::lock_guard lock(mutex_);
  const auto found = jobs_.find(number);
  if (found == jobs_.end()) return std::nullopt;
  const Job& job = found->second;
  std::map<std::string, int> counts = {
      {"succeeded", 0}, {"failed", 0}, {"refused", 0}, {"not_runnable", 0}};
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const Result& result : job.results) {
    ++counts[result.verdict];
    results.push_back({{"id", result.id},
                       {"verdict", result.verdict},
                       {"message", result.message},
                       {"output", result.output}});
  }
  const bool done = job.results.size() == job.ids.size();
  nlohmann::ordered_json out = {{"id", job.number},
                                {"state", done          ? "done"
                                          : job.running ? "running"
                                                        : "queued"},
                                {"total", job.ids.size()},
                                {"done", job.results.size()}};
  for (const auto& [name, count] : counts) out[name] = count;
  out["results"] = std::move(results);
  return out;
}

ReplayJobs::Result ReplayJobs::replayOne(const std::string& id) {
  auto lease = pool_.lease();
  if (!lease.ok()) return {id, "not_runnable", "redis: " + lease.error().message, {}};
  dlq::DeadLetterQueue queue(**lease, dlq_key_, 500, stream::entryReplyLimits(max_event_bytes_));
  auto entry = queue.find(id);
  if (!entry.ok()) return {id, "not_runnable", "redis: " + entry.error().message, {}};
  if (!*entry) return {id, "not_runnable", "no entry " + id + " in " + dlq_key_, {}};
  const auto snapshot = apps_.snapshot();
  TailSink sink;
  const dlq::ReplayResult replayed =
      dlq::Replayer(*snapshot, apps_.runtime()).replay(**lease, dlq_key_, **entry, sink);
  return {id, verdictName(replayed.verdict), replayed.message, sink.tail()};
}

void ReplayJobs::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const std::uint64_t number = queue_.front();
    queue_.pop_front();
    for (std::size_t at = 0;; ++at) {
      auto job = jobs_.find(number);
      if (job == jobs_.end() || at >= job->second.ids.size() || stopping_) break;
      job->second.running = true;
      const std::string id = job->second.ids[at];
      lock.unlock();
      Result result = replayOne(id);
      lock.lock();
      job = jobs_.find(number);
      if (job != jobs_.end()) job->second.results.push_back(std::move(result));
    }
  }
}

}  // namespace relay::console
