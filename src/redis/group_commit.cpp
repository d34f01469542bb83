#include "redis/group_commit.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>

#include "redis/reconnect.h"

namespace relay::redis {

// One wake-up of one waiting thread: a futex word, 0 until woken. Not std::binary_semaphore:
// libstdc++'s waits spin and call sched_yield() up to 16 times before they sleep, which on a
// busy 2-core machine is a context switch and a slice of CPU each (docs/benchmarks.md "Group
// commit").
class GroupCommit::Wakeup {
 public:
  void wait() {
    while (word_.load(std::memory_order_acquire) == 0) {
      ::syscall(SYS_futex, &word_, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
    }
  }
  // The waiter may return, and its Wakeup end, as soon as the word is set: a wake of a word no
  // longer waited on wakes no one, or a waiter that then finds its own word still 0.
  void wake() {
    word_.store(1, std::memory_order_release);
    ::syscall(SYS_futex, &word_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }

 private:
  std::atomic<std::uint32_t> word_{0};
};

struct GroupCommit::Call {
  std::vector<std::string> command;
  std::optional<Result<Reply>> reply;  // set by the sender before it wakes the caller
  Wakeup woken;                        // with its reply, or to send the next pipeline
};

GroupCommit::GroupCommit(Endpoint endpoint, ConnectionSettings settings)
    : endpoint_(std::move(endpoint)), settings_(std::move(settings)) {}

GroupCommit::~GroupCommit() = default;

GroupCommit::Counts GroupCommit::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::size_t GroupCommit::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

Result<Reply> GroupCommit::call(std::vector<std::string> command) {
  Call mine;
  mine.command = std::move(command);
  std::unique_lock lock(mutex_);
  waiting_.push_back(&mine);
  if (sending_) {
    lock.unlock();
    mine.woken.wait();
    if (mine.reply) return std::move(*mine.reply);
    lock.lock();  // woken to send: this call is still waiting, the first of the next pipeline
  }
  sending_ = true;
  std::vector<Call*> batch;
  batch.swap(waiting_);
  lock.unlock();

  std::vector<Result<Reply>> replies = send(batch);

  lock.lock();
  ++counts_.pipelines;
  counts_.calls += batch.size();
  // Whoever arrived during the round trip waits for a sender: the first of them sends next.
  Call* next = waiting_.empty() ? nullptr : waiting_.front();
  sending_ = next != nullptr;
  lock.unlock();
  std::optional<Result<Reply>> own;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] == &mine) {
      own = std::move(replies[i]);
      continue;
    }
    batch[i]->reply = std::move(replies[i]);
    batch[i]->woken.wake();
  }
  if (next) next->woken.wake();
  return std::move(*own);
}

std::vector<Result<Reply>> GroupCommit::send(std::vector<Call*>& batch) {
  std::vector<std::vector<std::string>> commands;
  commands.reserve(batch.size());
  for (Call* call : batch) commands.push_back(std::move(call->command));
  Status connected = reconnect(connection_, endpoint_, settings_);
  if (connected.ok()) {
    auto sent = connection_->pipeline(commands);
    if (sent.ok()) return std::move(sent).value();
    connected = sent.error();
  }
  std::vector<Result<Reply>> failed;
  failed.reserve(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) failed.emplace_back(connected.error());
  return failed;
}

}  // namespace relay::redis
