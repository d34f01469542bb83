// Schedules through the real `relay` binary: two workers start against one real redis-server;
// the catch-up at start publishes the example `users/nightly-digest` occurrence once, and one
// of them runs it in the sandbox.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fakes/temp_dir.h"
#include "schedule/occurrence.h"
#include "stream/stream_entry.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

class ScheduleStart : public RedisTest {
 protected:
  SpawnedProcess relay(const std::string& consumer) {
    return SpawnedProcess({RELAY_BINARY, "start", "--apps", RELAY_EXAMPLES_DIR "/apps"},
                          {"REDIS_URI=" + server().uri(), "RELAY_CONSUMER=" + consumer,
                           "RELAY_RUNTIME=sandbox", "RELAY_HTTP_ADDR=127.0.0.1:0"},
                          (logs_.path() / (consumer + ".log")).string());
  }
  /// The occurrence ids in the stream, one per entry.
  std::vector<std::string> occurrenceIds() {
    std::vector<std::string> ids;
    auto connection = server().connect();
    auto range = connection->command({"XRANGE", "events", "-", "+"});
    if (!range.ok()) return ids;
    auto entries = stream::parseEntries(range->view());
    if (!entries.ok()) return ids;
    for (const stream::StreamEntry& entry : *entries) {
      if (const std::string* envelope = entry.find(schedule::kEnvelopeField)) {
        auto occurrence = schedule::parseEnvelope(*envelope);
        ids.push_back(occurrence.ok() ? occurrence->id() : "malformed: " + *envelope);
      }
    }
    return ids;
  }
  long long pending() {
    auto connection = server().connect();
    auto reply = connection->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  }
  TempDir logs_;
};

TEST_F(ScheduleStart, TwoWorkersCatchUpTheLatestOccurrenceOnceAndRunItOnce) {
  SpawnedProcess first = relay("e2e-1");
  SpawnedProcess second = relay("e2e-2");
  ASSERT_TRUE(first.waitForLog("relay started")) << first.log();
  ASSERT_TRUE(second.waitForLog("relay started")) << second.log();
  const std::string ran = "[users/handlers.digest.run] nightly digest for ";
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        return first.log().find(ran) != std::string::npos ||
               second.log().find(ran) != std::string::npos;
      },
      seconds(30)))
      << first.log() << second.log();
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return pending() == 0; }, seconds(30)));
  const std::vector<std::string> ids = occurrenceIds();
  ASSERT_FALSE(ids.empty());
  // One entry per occurrence whichever worker won; two only if 03:00 Berlin passed meanwhile.
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
  EXPECT_LE(ids.size(), 2u);
  EXPECT_EQ(ids[0].rfind("schedule:users:nightly-digest:", 0), 0u) << ids[0];
  const auto runs = [&](const SpawnedProcess& process) {
    std::size_t count = 0;
    const std::string log = process.log();
    for (auto at = log.find(ran); at != std::string::npos; at = log.find(ran, at + 1)) ++count;
    return count;
  };
  EXPECT_EQ(runs(first) + runs(second), ids.size()) << first.log() << second.log();
  first.signal(SIGTERM);
  second.signal(SIGTERM);
  for (SpawnedProcess* process : {&first, &second}) {
    const int status = process->wait();
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

}  // namespace
}  // namespace relay::testing
