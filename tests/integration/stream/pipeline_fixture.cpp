#include "integration/stream/pipeline_fixture.h"

#include <gtest/gtest.h>

#include "catalog/invocation_spec.h"

namespace relay::stream::testing {

void PipelineTest::SetUp() {
  RedisTest::SetUp();
  redis_ = server().connect();
  lifecycle_settings_.keys = keys_;
  lifecycle_settings_.consumer = "worker-1";
  lifecycle_settings_.slot_wait = std::chrono::milliseconds(20);
  lifecycle_settings_.backoff.delays = {kBackoff};
  lifecycle_settings_.release_retry = std::chrono::milliseconds(0);
  lifecycle_settings_.retry_elsewhere = kBackoff;
  // No renewer heartbeats in most tests: expired claims are taken over at once (the outage
  // rules have tests of their own).
  lifecycle_settings_.claim.takeover_grace = std::chrono::milliseconds(0);
  consumer_settings_.block = std::chrono::milliseconds(10);
  consumer_settings_.min_pending_idle = std::chrono::milliseconds(0);
  consumer_settings_.due.min_idle = std::chrono::milliseconds(0);
  // No worker heartbeats here: every other consumer would look dead (the poison rule has its
  // process test, WaitingFaults.AMessageThatKillsItsWorkersIsDeadLetteredAfterThreeDeaths).
  consumer_settings_.poison.deaths = 0;
}

void PipelineTest::writeApp(const std::string& name, const std::string& yaml,
                            const std::vector<std::string>& handlers) {
  apps_.write(name + "/template.yaml", yaml);
  for (const std::string& handler : handlers) {
    apps_.write(name + "/" + handler, "#!/bin/sh\nexit 0\n", 0755);
  }
}

std::unique_ptr<invocation::RedisLifecycleStore> PipelineTest::newStore(
    const std::string& consumer) {
  invocation::RedisStoreSettings settings;
  settings.keys = keys_;
  settings.consumer = consumer;
  settings.retention = retention_;
  {
    std::lock_guard lock(groups_mutex_);
    std::shared_ptr<redis::GroupCommit>& group = groups_[consumer];
    if (!group)
      group = std::make_shared<redis::GroupCommit>(server().endpoint(), settings.connection,
                                                   real_clock_);
    settings.group = group;
  }
  return std::make_unique<invocation::RedisLifecycleStore>(settings, server().endpoint(), clock_);
}

void PipelineTest::build(int max_concurrency) {
  app::RegistrySettings settings;
  settings.apps_root = apps_.path();
  settings.keeper = keeper_hook_;
  settings.availability = [this](const app::App& app) -> runtime::Availability {
    for (const app::Rule& rule : app.rules) {
      auto available = runtime_.availability(catalog::availabilitySpec(app, rule.handler));
      if (!available.available) return {false, available.reason};
    }
    return {};
  };
  auto registry = app::Registry::create(settings);
  ASSERT_TRUE(registry.ok()) << registry.error().message;
  registry_ = std::move(registry).value();
  catalog_ = makeCatalog(*registry_);
  limiter_ = std::make_unique<invocation::ConcurrencyLimiter>(max_concurrency);
  store_ = newStore();
  renewer_store_ = newStore();
  renewer_ = std::make_unique<invocation::ClaimRenewer>(invocation::RenewerSettings{},
                                                        *renewer_store_, metrics_, logger_, clock_);
  lifecycle_ = replicaLifecycle("worker-1");
  ConsumerSettings consumer = consumer_settings_;
  consumer.consumer = "worker-1";
  consumer.workers = max_concurrency;
  consumer_ = std::make_unique<Consumer>(
      consumer, server().endpoint(), *lifecycle_,
      [this]() -> std::unique_ptr<invocation::LifecycleStore> { return newStore(); }, metrics_,
      logger_, consumer_clock_ ? *consumer_clock_ : clock_);
  ASSERT_TRUE(consumer_->ensureGroup(*redis_).ok());
}

std::unique_ptr<catalog::RegistryCatalog> PipelineTest::makeCatalog(const app::Registry& registry) {
  if (!publication_check_) {
    publication_check_ =
        std::make_unique<catalog::RedisPublicationCheck>(server().endpoint(), "events");
  }
  catalog::OccurrenceChecks checks = occurrence_checks_;
  checks.published = publication_check_.get();
  return std::make_unique<catalog::RegistryCatalog>(registry, max_event_bytes_, checks);
}

std::unique_ptr<invocation::Lifecycle> PipelineTest::replicaLifecycle(
    const std::string& consumer, Clock* clock, invocation::Catalog* catalog) {
  invocation::LifecycleSettings settings = lifecycle_settings_;
  settings.consumer = consumer;
  return std::make_unique<invocation::Lifecycle>(settings, catalog ? *catalog : *catalog_, runtime_,
                                                 *limiter_, renewer_.get(), observer_, metrics_,
                                                 logger_, clock ? *clock : clock_, random_);
}

void PipelineTest::waitForBackoff() {
  real_clock_.sleepFor(kBackoff + std::chrono::milliseconds(50));
}

std::string PipelineTest::xadd(const std::string& event) { return xaddFields({"event", event}); }

std::string PipelineTest::xaddFields(const std::vector<std::string>& fields) {
  std::vector<std::string> command = {"XADD", "events", "*"};
  command.insert(command.end(), fields.begin(), fields.end());
  auto reply = redis_->command(command);
  EXPECT_TRUE(reply.ok());
  return std::string(*reply->string());
}

int PipelineTest::readOnce() {
  auto read = consumer_->readOnce(*redis_);
  EXPECT_TRUE(read.ok()) << read.error().message;
  return read.ok() ? *read : -1;
}

int PipelineTest::reclaim() {
  // What a worker's background loops bring back: the parked messages that are due (the
  // due-retry poller), then what other consumers left idle (the reclaim sweep).
  auto due = consumer_->pollDueOnce(*redis_);
  EXPECT_TRUE(due.ok()) << due.error().message;
  auto reclaimed = consumer_->reclaimOnce(*redis_);
  EXPECT_TRUE(reclaimed.ok()) << reclaimed.error().message;
  return due.ok() && reclaimed.ok() ? *due + *reclaimed : -1;
}

long long PipelineTest::pendingCount() {
  return *redis_->command({"XPENDING", "events", "relay"})->at(0)->integer();
}

bool PipelineTest::caughtUp(const std::string& last_id) {
  auto group = redis_->command({"XINFO", "GROUPS", "events"});
  if (!group.ok()) return false;
  auto last_delivered = group->at(0)->at(7)->string();  // last-delivered-id
  return last_delivered.ok() && *last_delivered == last_id && pendingCount() == 0;
}

bool PipelineTest::waitCaughtUp(const std::string& last_id) {
  for (int i = 0; i < 1000 && !caughtUp(last_id); ++i)
    real_clock_.sleepFor(std::chrono::milliseconds(10));
  return caughtUp(last_id);
}

std::string PipelineTest::marker(const std::string& id, const std::string& field) {
  auto reply = redis_->command({"HGET", keys_.state(id), field});
  auto text = reply->optionalString();
  return text.ok() && text->has_value() ? std::string(**text) : "<nil>";
}

long long PipelineTest::ttlOf(const std::string& key) {
  return *redis_->command({"PTTL", key})->integer();
}

std::vector<std::map<std::string, std::string>> PipelineTest::dlqEntries() {
  std::vector<std::map<std::string, std::string>> entries;
  auto range = redis_->command({"XRANGE", "relay:events:dlq", "-", "+"});
  auto parsed = parseEntries(range->view());
  if (!parsed.ok()) return entries;
  for (const StreamEntry& entry : *parsed) {
    entries.emplace_back(entry.fields.begin(), entry.fields.end());
  }
  return entries;
}

void PipelineTest::claimFor(const std::string& id, const std::string& consumer) {
  ASSERT_TRUE(redis_->command({"XCLAIM", "events", "relay", consumer, "0", id, "JUSTID"}).ok());
}

StreamEntry PipelineTest::entryOf(const std::string& id) {
  auto range = redis_->command({"XRANGE", "events", id, id});
  auto parsed = parseEntries(range->view());
  return parsed->at(0);
}

}  // namespace relay::stream::testing
