#pragma once
// The fault-injection suite's rig (docs/pipeline.md "Guarantees"): a real redis-server, real
// worker processes (relay_test_worker: the real Worker with shortened internals, on the process
// runtime), apps written to temp dirs, and what a test reads back from Redis. Faults are real:
// kill -9 of a worker, Redis paused or stopped, a replica on another rule version.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fakes/temp_dir.h"
#include "invocation/keys.h"
#include "stream/stream_entry.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = RedisServer::create();
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(server).value();
    redis_ = server_->connect();
  }

  /// An apps root with one app `name` whose template is `yaml` and whose `bin/*.sh` handlers
  /// are the given scripts; several roots make several rule versions.
  TempDir& appsRoot(const std::string& root) {
    auto& dir = roots_[root];
    if (!dir) {
      dir = std::make_unique<TempDir>();
      ::chmod(dir->path().c_str(), 0755);
    }
    return *dir;
  }
  void writeApp(const std::string& root, const std::string& name, const std::string& yaml,
                const std::map<std::string, std::string>& handlers) {
    TempDir& dir = appsRoot(root);
    dir.write(name + "/template.yaml", yaml);
    for (const auto& [path, script] : handlers) dir.write(name + "/" + path, script, 0755);
    ::chmod((dir.path() / name).c_str(), 0755);
    ::chmod((dir.path() / name / "bin").c_str(), 0755);
  }

  /// A worker process on `root`'s apps with consumer name `consumer`.
  std::unique_ptr<SpawnedProcess> worker(const std::string& root, const std::string& consumer,
                                         std::vector<std::string> env = {}) {
    env.push_back("REDIS_URI=" + server_->uri());
    env.push_back("RELAY_APPS=" + appsRoot(root).path().string());
    env.push_back("RELAY_RUNTIME=process");
    env.push_back("RELAY_HTTP_ADDR=127.0.0.1:0");
    env.push_back("RELAY_CONSUMER=" + consumer);
    auto process =
        std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_TEST_WORKER}, env,
                                         (appsRoot(root).path() / (consumer + ".log")).string());
    EXPECT_TRUE(process->waitForLog("relay started")) << process->log();
    return process;
  }

  std::string xadd(const std::string& event) {
    return std::string(*redis_->command({"XADD", "events", "*", "event", event})->string());
  }
  long long pending() {
    auto reply = redis_->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  }
  /// The group's pending messages per consumer (the XPENDING summary).
  std::map<std::string, long long> pendingByConsumer() {
    std::map<std::string, long long> counts;
    auto reply = redis_->command({"XPENDING", "events", "relay"});
    if (!reply.ok() || reply->size() < 4) return counts;
    auto rows = reply->at(3);
    if (!rows.ok() || rows->isNil()) return counts;
    auto elements = rows->elements();  // kept: a range-for over a temporary's value dangles
    if (!elements.ok()) return counts;
    for (const auto& row : *elements) {
      counts[std::string(*row.at(0)->string())] = std::stoll(std::string(*row.at(1)->string()));
    }
    return counts;
  }
  std::string field(const std::string& id, const std::string& name) {
    auto reply = redis_->command({"HGET", keys_.state(id), name});
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::string(**text) : "<nil>";
  }
  long long ttlOf(const std::string& key) { return *redis_->command({"PTTL", key})->integer(); }
  std::vector<std::map<std::string, std::string>> dlq() {
    std::vector<std::map<std::string, std::string>> entries;
    auto range = redis_->command({"XRANGE", keys_.dlq(), "-", "+"});
    auto parsed = stream::parseEntries(range->view());
    if (!parsed.ok()) return entries;
    for (const auto& entry : *parsed)
      entries.emplace_back(entry.fields.begin(), entry.fields.end());
    return entries;
  }
  /// Calls of `command` the server has served so far (INFO commandstats).
  long long calls(const std::string& command) {
    auto info = redis_->command({"INFO", "commandstats"});
    const std::string text(*info->string());
    const std::string key = "cmdstat_" + command + ":calls=";
    const auto at = text.find(key);
    return at == std::string::npos ? 0 : std::stoll(text.substr(at + key.size()));
  }
  static long long count(const std::string& text, const std::string& needle) {
    long long n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  }
  static bool waitUntil(const std::function<bool()>& condition,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return SpawnedProcess::waitUntil(condition, timeout);
  }

  const invocation::StreamKeys keys_{"events", "relay"};
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<redis::Connection> redis_;
  std::map<std::string, std::unique_ptr<TempDir>> roots_;
};

}  // namespace relay::testing
