#include "redis/group_commit.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
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

GroupCommit::GroupCommit(Endpoint endpoint, ConnectionSettings settings, Clock& clock,
                         std::chrono::milliseconds rest)
    : endpoint_(std::move(endpoint)), settings_(std::move(settings)), clock_(clock), rest_(rest) {}

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
  return sendWaiting(mine, lock);
}

Result<Reply> GroupCommit::sendWaiting(Call& mine, std::unique_lock<std::mutex>& lock) {
  std::vector<Call*> batch;
  batch.swap(waiting_);
  std::vector<Result<Reply>> replies;
  const MonoTime now = clock_.monotonicNow();
  if (failed_at_ && now - *failed_at_ < rest_) {
    const auto ago = std::chrono::duration_cast<std::chrono::milliseconds>(now - *failed_at_);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      replies.emplace_back(Error{ErrorKind::kClosed, "not sent: the shared connection failed " +
                                                         std::to_string(ago.count()) + " ms ago"});
    }
  } else {
    lock.unlock();
    replies = send(batch);
    lock.lock();
    ++counts_.pipelines;
    counts_.calls += batch.size();
    const bool lost = std::any_of(replies.begin(), replies.end(), [](const Result<Reply>& reply) {
      return !reply.ok() && reply.error().kind != ErrorKind::kReply;
    });
    if (lost) {
      failed_at_ = clock_.monotonicNow();
    } else {
      failed_at_.reset();
    }
  }
  // Whoever arrived meanwhile waits for a sender: the first of them sends next, once this
  // pipeline's callers have their replies (woken first, the next sender would send a smaller
  // pipeline before they could add their next calls: 0.60 -> 0.70 round trips per matched
  // message in case (e), docs/benchmarks.md "Group commit").
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

std::vector<Result<Reply>> GroupCommit::send(std::vector<Call*>& batch) noexcept {
  Error failure{ErrorKind::kClosed, "not sent"};
  try {
    std::vector<std::vector<std::string>> commands;
    commands.reserve(batch.size());
    for (Call* call : batch) commands.push_back(std::move(call->command));
    Status connected = reconnect(connection_, endpoint_, settings_);
    if (connected.ok()) {
      auto sent = connection_->pipeline(commands);
      if (sent.ok()) return std::move(sent).value();
      failure = sent.error();
    } else {
      // Whatever stopped the connection (a refused login among them) is the transport's, not a
      // reply to the caller's command.
      failure = Error{ErrorKind::kClosed, "no connection: " + connected.error().message};
    }
  } catch (const std::exception& error) {
    connection_.reset();
    failure = Error{ErrorKind::kClosed, std::string("not sent: ") + error.what()};
  }
  std::vector<Result<Reply>> failed;
  for (std::size_t i = 0; i < batch.size(); ++i) failed.emplace_back(failure);
  return failed;
}

}  // namespace relay::redis
