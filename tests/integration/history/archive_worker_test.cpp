// The archive written by real workers (relay_test_worker: the Worker of `relay start`, its
// archiver pacing 25 entries per 50 ms with a 1 s lease): the worker archiving is killed with
// SIGKILL midway through a backlog, a second one takes over once the lease ran out, and the
// archive ends up with every selected entry once, in stream order, under its original id.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fakes/temp_dir.h"
#include "stream/stream_entry.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using std::chrono::milliseconds;

class ArchiveWorkerTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    // Rules that match nothing (the events are acknowledged at once, no handler runs); the
    // archive keeps kind a.
    apps_.write("shop/template.yaml", R"(runtime: exec
events:
  - handler: bin/never.sh
    pattern: {kind: [never]}
archive:
  retention: 30d
  pattern: {kind: [a]}
)");
    apps_.write("shop/bin/never.sh", "#!/bin/sh\nexit 0\n", 0755);
  }

  std::unique_ptr<SpawnedProcess> worker(const std::string& name) {
    return std::make_unique<SpawnedProcess>(
        std::vector<std::string>{RELAY_TEST_WORKER},
        std::vector<std::string>{"REDIS_URI=" + server().uri(), "REDIS_STREAM=events",
                                 "RELAY_APPS=" + apps_.path().string(), "RELAY_RUNTIME=process",
                                 "RELAY_HTTP_ADDR=127.0.0.1:0", "RELAY_CONSUMER=" + name},
        (logs_.path() / (name + ".log")).string());
  }

  long long hashNumber(const std::string& name) {
    auto reply = redis_->command({"HGET", "relay:events:archiver:relay", name});
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::stoll(std::string(**text)) : 0;
  }

  std::string hashText(const std::string& name) {
    auto reply = redis_->command({"HGET", "relay:events:archiver:relay", name});
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::string(**text) : std::string();
  }

  std::vector<std::string> archived() {
    std::vector<std::string> ids;
    auto reply = redis_->command({"XRANGE", "relay:events:archive:relay:shop", "-", "+"});
    auto entries = stream::parseEntries(reply->view());
    for (const auto& entry : *entries) ids.push_back(entry.id);
    return ids;
  }

  std::unique_ptr<redis::Connection> redis_;
  TempDir apps_;
  TempDir logs_;
};

TEST_F(ArchiveWorkerTest, AWorkerKilledWhileArchivingIsReplacedWithoutGapOrDuplicate) {
  // 1,000 entries, every third of kind a: forty batches of 25, about two seconds of archiving.
  std::vector<std::string> selected;
  std::string last;
  for (int i = 0; i < 1000; ++i) {
    const std::string kind = i % 3 == 0 ? "a" : "b";
    auto id = redis_->command({"XADD", "events", "*", "event",
                               "{\"kind\":\"" + kind + "\",\"n\":" + std::to_string(i) + "}"});
    ASSERT_TRUE(id.ok());
    last = std::string(*id->string());
    if (kind == "a") selected.push_back(last);
  }
  auto first = worker("first");
  ASSERT_TRUE(first->waitForLog("relay started")) << first->log();
  // Kill it once it archived some but not all.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (hashNumber("archived") < 60 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  first->signal(SIGKILL);
  const long long before = hashNumber("archived");
  ASSERT_GE(before, 60) << first->log();
  ASSERT_LT(before, static_cast<long long>(selected.size())) << "it finished before the kill";
  EXPECT_EQ(hashText("owner"), "first");

  auto second = worker("second");
  ASSERT_TRUE(second->waitForLog("relay started")) << second->log();
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (hashText("cursor") != last && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(hashText("cursor"), last) << second->log();
  EXPECT_EQ(hashText("owner"), "second");
  EXPECT_EQ(archived(), selected);  // each once, in order, under its original id
  EXPECT_EQ(hashNumber("gaps"), 0);
}

TEST_F(ArchiveWorkerTest, AStreamArchiveKeepsWhatItsPatternFileSelectsAndABadFileStopsTheStart) {
  const auto pattern = logs_.write("archive.yaml", "kind: [b]\n");
  const auto bad = logs_.write("bad.yaml", "kind: b\n");
  std::vector<std::string> env = {"REDIS_URI=" + server().uri(),         "REDIS_STREAM=events",
                                  "RELAY_APPS=" + apps_.path().string(), "RELAY_RUNTIME=process",
                                  "RELAY_HTTP_ADDR=127.0.0.1:0",         "RELAY_CONSUMER=w",
                                  "RELAY_ARCHIVE_RETENTION=1d"};
  auto refused = std::make_unique<SpawnedProcess>(
      std::vector<std::string>{RELAY_TEST_WORKER},
      [&] {
        auto values = env;
        values.push_back("RELAY_ARCHIVE_PATTERN_FILE=" + bad.string());
        return values;
      }(),
      (logs_.path() / "refused.log").string());
  ASSERT_TRUE(
      SpawnedProcess::waitUntil([&] { return !refused->running(); }, std::chrono::seconds(10)))
      << refused->log();
  EXPECT_NE(refused->log().find("RELAY_ARCHIVE_PATTERN_FILE: not a valid pattern:"),
            std::string::npos)
      << refused->log();
  EXPECT_NE(refused->log().find(bad.string() + ":1:7: "), std::string::npos) << refused->log();

  std::vector<std::string> b_ids;
  for (const char* kind : {"a", "b", "c", "b"}) {
    auto id = redis_->command(
        {"XADD", "events", "*", "event", std::string("{\"kind\":\"") + kind + "\"}"});
    if (std::string(kind) == "b") b_ids.emplace_back(*id->string());
  }
  env.push_back("RELAY_ARCHIVE_PATTERN_FILE=" + pattern.string());
  auto worker = std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_TEST_WORKER}, env,
                                                 (logs_.path() / "w.log").string());
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        auto reply = redis_->command({"XLEN", "relay:events:archive:relay"});
        return reply.ok() && *reply->integer() == 2;
      },
      std::chrono::seconds(20)))
      << worker->log();
  auto reply = redis_->command({"XRANGE", "relay:events:archive:relay", "-", "+"});
  auto entries = stream::parseEntries(reply->view());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].id, b_ids[0]);
  EXPECT_EQ((*entries)[1].id, b_ids[1]);
  // And the app's own archive beside it: kind a.
  EXPECT_TRUE(
      SpawnedProcess::waitUntil([&] { return archived().size() == 1; }, std::chrono::seconds(20)));
  // The retentions applied, for a replay's report of what is missing: the stream's
  // (REDIS_STREAM_RETENTION's default 24h, by the housekeeper) and each archive's.
  const auto retention = [&](const std::string& field) {
    auto value = redis_->command({"HGET", "relay:events:retention", field});
    auto text = value->optionalString();
    return text.ok() && text->has_value() ? std::string(**text) : std::string();
  };
  // Recorded by the housekeeper's first round and the archiver's first trim, after its copies.
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        return retention("stream") == "86400000" &&
               retention("archive:relay:events:archive:relay") == "86400000" &&
               retention("archive:relay:events:archive:relay:shop") == "2592000000";
      },
      std::chrono::seconds(10)))
      << retention("stream") << " " << retention("archive:relay:events:archive:relay") << " "
      << retention("archive:relay:events:archive:relay:shop");
}

}  // namespace
}  // namespace relay::testing
