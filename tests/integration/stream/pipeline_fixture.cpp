#include "integration/stream/pipeline_fixture.h"

#include <gtest/gtest.h>

#include "stream/invocation_spec.h"

namespace relay::stream::testing {

void PipelineTest::SetUp() {
  RedisTest::SetUp();
  redis_ = server().connect();
  dispatch_settings_.consumer = "worker-1";
  dispatch_settings_.slot_wait = std::chrono::milliseconds(20);
}

void PipelineTest::writeApp(const std::string& name, const std::string& yaml,
                            const std::vector<std::string>& handlers) {
  apps_.write(name + "/template.yaml", yaml);
  for (const std::string& handler : handlers) {
    apps_.write(name + "/" + handler, "#!/bin/sh\nexit 0\n", 0755);
  }
}

void PipelineTest::build(int max_concurrency) {
  app::RegistrySettings settings;
  settings.apps_root = apps_.path();
  settings.availability = [this](const app::App& app) -> app::Availability {
    for (const app::Rule& rule : app.rules) {
      auto available = runtime_.availability(availabilitySpec(app, rule.handler));
      if (!available.available) return {false, available.reason};
    }
    return {};
  };
  auto registry = app::Registry::create(settings);
  ASSERT_TRUE(registry.ok()) << registry.error().message;
  registry_ = std::move(registry).value();
  limiter_ = std::make_unique<ConcurrencyLimiter>(max_concurrency);
  dispatcher_ = std::make_unique<Dispatcher>(dispatch_settings_, store_, *registry_, runtime_,
                                             *limiter_, metrics_, logger_, clock_);
  ConsumerSettings consumer;
  consumer.consumer = "worker-1";
  consumer.block = std::chrono::milliseconds(10);
  consumer.min_pending_idle = std::chrono::milliseconds(0);
  consumer_ = std::make_unique<Consumer>(consumer, server().endpoint(), *dispatcher_, metrics_,
                                         logger_, clock_);
  ASSERT_TRUE(consumer_->ensureGroup(*redis_).ok());
}

std::unique_ptr<Dispatcher> PipelineTest::replicaDispatcher(const std::string& consumer) {
  DispatchSettings settings = dispatch_settings_;
  settings.consumer = consumer;
  return std::make_unique<Dispatcher>(settings, store_, *registry_, runtime_, *limiter_, metrics_,
                                      logger_, clock_);
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
  auto reclaimed = consumer_->reclaimOnce(*redis_);
  EXPECT_TRUE(reclaimed.ok()) << reclaimed.error().message;
  return reclaimed.ok() ? *reclaimed : -1;
}

long long PipelineTest::pendingCount() {
  return *redis_->command({"XPENDING", "events", "relay"})->at(0)->integer();
}

std::string PipelineTest::marker(const std::string& id, const std::string& field) {
  auto reply = redis_->command({"HGET", store_.keys().state(id), field});
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
  for (const StreamEntry& entry : *parsed) {
    entries.emplace_back(entry.fields.begin(), entry.fields.end());
  }
  return entries;
}

StreamEntry PipelineTest::entryOf(const std::string& id) {
  auto range = redis_->command({"XRANGE", "events", id, id});
  auto parsed = parseEntries(range->view());
  return parsed->at(0);
}

}  // namespace relay::stream::testing
