#include "integration/ha/acknowledged_producer.h"

#include <memory>

#include "redis/connection.h"

namespace relay::testing {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

AcknowledgedProducer::AcknowledgedProducer(Settings settings)
    : settings_(std::move(settings)), thread_([this] { run(); }) {}

AcknowledgedProducer::~AcknowledgedProducer() {
  stopping_ = true;
  thread_.join();
}

void AcknowledgedProducer::failed(const std::string& what) {
  std::lock_guard lock(mutex_);
  if (outage_start_ == steady_clock::time_point{}) outage_start_ = steady_clock::now();
  failures_.push_back(what);
}

void AcknowledgedProducer::run() {
  redis::ConnectionSettings timeouts;
  timeouts.connect_timeout = milliseconds(500);
  timeouts.command_timeout = milliseconds(1'000);
  std::unique_ptr<redis::Connection> redis;
  for (int n = 1; n <= settings_.count && !stopping_; ++n) {
    const std::string event = R"({"kind":"ha","n":)" + std::to_string(n) + "}";
    bool resent = false;
    while (!stopping_) {
      if (!redis || !redis->ok()) {
        auto connected = redis::Connection::create(settings_.endpoint, timeouts);
        if (!connected) {
          failed("connect: " + connected.error().message);
          std::this_thread::sleep_for(settings_.retry_pause);
          continue;
        }
        redis = std::move(connected).value();
      }
      auto added = redis->command({"XADD", settings_.stream, "*", "event", event});
      if (!added) {
        // An error reply (READONLY, CLUSTERDOWN) was not applied; a call cut off by a broken
        // connection may have been.
        if (added.error().kind != redis::ErrorKind::kReply) resent = true;
        failed("XADD n=" + std::to_string(n) + ": " + added.error().message);
        std::this_thread::sleep_for(settings_.retry_pause);
        continue;
      }
      Acknowledged ack;
      ack.n = n;
      auto id = added->string();
      ack.id = id.ok() ? std::string(*id) : "";
      ack.server = redis->server();
      auto waited = redis->command({"WAIT", "1", std::to_string(settings_.wait_timeout.count())});
      if (!waited || !waited->integer()) {
        // The master died before saying whether a replica has the entry: send it again.
        resent = true;
        failed("WAIT n=" + std::to_string(n) + ": " +
               (waited ? std::string("not an integer") : waited.error().message));
        std::this_thread::sleep_for(settings_.retry_pause);
        continue;
      }
      ack.replicas = *waited->integer();
      ack.resent = resent;
      ack.at = steady_clock::now();
      {
        std::lock_guard lock(mutex_);
        if (outage_start_ != steady_clock::time_point{}) {
          longest_outage_ = std::max(
              longest_outage_, std::chrono::duration_cast<milliseconds>(ack.at - outage_start_));
          outage_start_ = {};
        }
        acknowledged_.push_back(std::move(ack));
      }
      changed_.notify_all();
      break;
    }
    std::this_thread::sleep_for(settings_.interval);
  }
}

bool AcknowledgedProducer::waitForAcknowledged(int n, milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout,
                           [&] { return static_cast<int>(acknowledged_.size()) >= n; });
}

std::vector<Acknowledged> AcknowledgedProducer::acknowledged() const {
  std::lock_guard lock(mutex_);
  return acknowledged_;
}

std::vector<std::string> AcknowledgedProducer::failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

milliseconds AcknowledgedProducer::longestOutage() const {
  std::lock_guard lock(mutex_);
  return longest_outage_;
}

}  // namespace relay::testing
