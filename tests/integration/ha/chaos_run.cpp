#include "integration/ha/chaos_run.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "invocation/keys.h"
#include "invocation/marker.h"
#include "invocation/plan.h"
#include "redis/connection.h"
#include "stream/stream_entry.h"

namespace relay::testing {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

ChaosRun::ChaosRun(const std::vector<std::string>& worker_uris, redis::Endpoint redis, int events,
                   bool with_schedule)
    : worker_uris_(worker_uris), redis_(std::move(redis)), events_(events), apps_(with_schedule) {}

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

ChaosRun::Audit ChaosRun::audit() {
  Audit audit;
  auto connection = redis::Connection::create(redis_);
  if (!connection) return audit;
  redis::Connection& redis = **connection;
  auto range = redis.command({"XRANGE", "{events}", "-", "+"});
  if (!range) return audit;
  auto entries = stream::parseEntries(range->view());
  if (!entries) return audit;
  const auto started = apps_.startedAttempts();
  const invocation::StreamKeys keys{"{events}", "relay"};
  audit.never_run_charged = 0;
  audit.early_acks = 0;
  for (const stream::StreamEntry& entry : *entries) {
    ++audit.messages;
    auto hash = redis.command({"HGETALL", keys.state(entry.id)});
    auto pel = redis.command({"XPENDING", "{events}", "relay", entry.id, entry.id, "1"});
    if (!hash || !pel) return Audit{};
    const bool pending = pel->size() > 0;
    std::map<std::string, std::string> state;
    for (size_t i = 0; i + 1 < hash->size(); i += 2) {
      state[std::string(*hash->at(i)->string())] = std::string(*hash->at(i + 1)->string());
    }
    const auto plan_text = state.find(std::string(invocation::kPlanField));
    if (plan_text == state.end()) {
      if (!pending) ++audit.early_acks;  // acknowledged, yet nothing ever ran or was planned
      continue;
    }
    const auto plan = invocation::decodePlan(plan_text->second);
    if (!plan) return Audit{};
    for (const invocation::PlannedInvocation& planned : plan->invocations) {
      const auto text = state.find(planned.field());
      const auto marker =
          text == state.end() ? std::nullopt : invocation::Marker::parse(text->second);
      if (!pending && (!marker || !marker->terminal())) ++audit.early_acks;
      if (!marker) continue;
      // A claim not yet begun charged nothing; every other marker's attempts count as run.
      const int charged = marker->state == invocation::Marker::State::kClaimed ? marker->attempt - 1
                                                                               : marker->attempt;
      const auto ran = started.find(entry.id + "/" + planned.app + "/" + planned.handler);
      int ran_count = 0;
      if (ran != started.end()) {
        for (int attempt : ran->second) ran_count += attempt <= charged;
      }
      audit.never_run_charged += std::max(0, charged - ran_count);
    }
  }
  return audit;
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

std::string ChaosRun::report(const std::string& what, const std::vector<milliseconds>& followed,
                             const Audit& audit) {
  std::ostringstream out;
  out << report(what, followed) << "; audit of " << audit.messages
      << " stream entries: " << audit.never_run_charged << " charged attempts never run, "
      << audit.early_acks << " messages acknowledged early";
  return out.str();
}

std::string ChaosRun::logs() const {
  std::string text;
  for (const auto& worker : workers_) text += worker->log() + "\n----\n";
  return text;
}

}  // namespace relay::testing
