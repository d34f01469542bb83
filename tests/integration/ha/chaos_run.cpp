#include "integration/ha/chaos_run.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "redis/connection.h"

namespace relay::testing {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

ChaosRun::ChaosRun(const std::vector<std::string>& worker_uris, redis::Endpoint redis, int events)
    : worker_uris_(worker_uris), redis_(std::move(redis)), events_(events) {}

bool ChaosRun::start(std::string& why) {
  for (size_t i = 0; i < worker_uris_.size(); ++i) {
    workers_.push_back(std::make_unique<HaWorker>(worker_uris_[i], apps_,
                                                  "worker" + std::to_string(i + 1), logs_.path()));
  }
  for (auto& worker : workers_) {
    if (!worker->started()) {
      why = logs();
      return false;
    }
  }
  AcknowledgedProducer::Settings settings;
  settings.endpoint = redis_;
  settings.count = events_;
  producer_ = std::make_unique<AcknowledgedProducer>(std::move(settings));
  return true;
}

bool ChaosRun::waitForAcknowledged(int n) {
  return producer_->waitForAcknowledged(n, std::chrono::seconds(60));
}

std::vector<milliseconds> ChaosRun::timeToNewMaster(steady_clock::time_point since,
                                                    milliseconds timeout) {
  std::vector<milliseconds> followed(workers_.size(), milliseconds(-1));
  const auto until = steady_clock::now() + timeout;
  size_t left = workers_.size();
  while (left > 0 && steady_clock::now() < until) {
    for (size_t i = 0; i < workers_.size(); ++i) {
      if (followed[i].count() >= 0) continue;
      if (workers_[i]->metric("relay_redis_failovers_total") >= 1) {
        followed[i] = std::chrono::duration_cast<milliseconds>(steady_clock::now() - since);
        --left;
      }
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return followed;
}

long long ChaosRun::pending() {
  redis::ConnectionSettings timeouts;
  timeouts.connect_timeout = milliseconds(500);
  timeouts.command_timeout = milliseconds(1'000);
  auto connection = redis::Connection::create(redis_, timeouts);
  if (!connection) return -1;
  auto reply = (*connection)->command({"XPENDING", "{events}", "relay"});
  if (!reply || !reply->at(0) || !reply->at(0)->integer()) return -1;
  return *reply->at(0)->integer();
}

std::vector<int> ChaosRun::atRisk() const {
  std::vector<int> events;
  for (const Acknowledged& ack : producer_->acknowledged()) {
    if (ack.at < disrupted_at_ && ack.replicas == 0) events.push_back(ack.n);
  }
  return events;
}

std::vector<int> ChaosRun::lost() const {
  const std::vector<int> risked = atRisk();
  std::vector<int> events;
  for (int n : coverage().missing) {
    if (std::find(risked.begin(), risked.end(), n) == risked.end()) events.push_back(n);
  }
  return events;
}

bool ChaosRun::settle(milliseconds timeout) {
  return SpawnedProcess::waitUntil(
      [&] {
        return static_cast<int>(producer_->acknowledged().size()) == events_ && lost().empty() &&
               pending() == 0;
      },
      timeout);
}

std::string ChaosRun::report(const std::string& what, const std::vector<milliseconds>& followed) {
  const HaApps::Coverage covered = coverage();
  int replicated = 0;
  for (const Acknowledged& ack : producer_->acknowledged()) replicated += ack.replicas > 0;
  std::ostringstream out;
  out << what << ": " << events_ << " events acknowledged (" << replicated
      << " confirmed on a replica by WAIT, " << atRisk().size() << " by the old master alone), "
      << covered.missing.size() << " lost, " << pending() << " pending at the end; " << covered.runs
      << " handler runs for " << covered.messages << " stream entries: " << covered.redelivered
      << " at-least-once duplicate runs, " << covered.resent
      << " events appended twice by the producer's retry (" << producer_->failures().size()
      << " failed producer calls, longest producer outage " << producer_->longestOutage().count()
      << " ms); time to the new master:";
  for (size_t i = 0; i < followed.size(); ++i) {
    out << " worker" << (i + 1) << " " << followed[i].count() << " ms";
  }
  return out.str();
}

std::string ChaosRun::logs() const {
  std::string text;
  for (const auto& worker : workers_) text += worker->log() + "\n----\n";
  return text;
}

}  // namespace relay::testing
