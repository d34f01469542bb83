// docs/apps.md "Loaded, available, and reloads": the templates a worker keeps in Redis are per
// consumer group (two groups on one stream are two deployments), the per-stream key of earlier
// releases is read when the group has none, and a recall that failed for want of Redis is owed
// until Redis answers. RedisTemplateKeeper against a real redis-server.
#include <gtest/gtest.h>

#include <sstream>

#include "common/system_clock.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "support/redis_server.h"
#include "worker/redis_template_keeper.h"

namespace relay::testing {
namespace {

class KeptTemplates : public RedisTest {
 protected:
  std::unique_ptr<worker::RedisTemplateKeeper> keeper(const std::string& group) {
    return std::make_unique<worker::RedisTemplateKeeper>(
        server().endpoint(), invocation::StreamKeys{"events", group}, metrics_, logger_);
  }
  std::string get(const std::string& key) {
    auto redis = server().connect();
    auto value = redis->command({"GET", key});
    return value.ok() && value->optionalString()->has_value()
               ? std::string(**value->optionalString())
               : "<nil>";
  }

  SystemClock clock_;
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kDebug};
};

TEST_F(KeptTemplates, EachGroupKeepsAndRecallsItsOwnTemplate) {
  auto blue = keeper("blue");
  auto green = keeper("green");
  blue->keep("shop", "runtime: exec # blue\n");
  green->keep("shop", "runtime: exec # green\n");
  EXPECT_EQ(get("relay:events:apps:blue:shop"), "runtime: exec # blue\n");
  EXPECT_EQ(get("relay:events:apps:green:shop"), "runtime: exec # green\n");
  EXPECT_EQ(get("relay:events:apps:shop"), "<nil>") << "the per-stream key is no longer written";
  EXPECT_EQ(blue->recall("shop"), "runtime: exec # blue\n");
  EXPECT_EQ(green->recall("shop"), "runtime: exec # green\n");
  EXPECT_EQ(keeper("red")->recall("shop"), std::nullopt);
}

TEST_F(KeptTemplates, APerStreamTemplateOfAnEarlierReleaseIsReadWhenTheGroupHasNone) {
  auto redis = server().connect();
  ASSERT_TRUE(redis->command({"SET", "relay:events:apps:shop", "runtime: exec # old\n"}).ok());
  auto blue = keeper("blue");
  EXPECT_EQ(blue->recall("shop"), "runtime: exec # old\n");
  blue->keep("shop", "runtime: exec # blue\n");
  EXPECT_EQ(blue->recall("shop"), "runtime: exec # blue\n") << "the group's own key wins";
}

TEST_F(KeptTemplates, ARecallThatFailedForWantOfRedisIsOwedUntilRedisAnswers) {
  auto blue = keeper("blue");
  blue->keep("shop", "runtime: exec # blue\n");
  auto later = keeper("blue");  // a worker started while Redis is down
  ASSERT_TRUE(server().stop().ok());
  EXPECT_EQ(later->recall("shop"), std::nullopt);
  later->keep("other", "runtime: exec # other\n");
  EXPECT_TRUE(later->owed());
  EXPECT_EQ(later->owedRecalls(), std::set<std::string>{"shop"});
  EXPECT_FALSE(later->retryKeeps()) << "still down";
  ASSERT_TRUE(server().start().ok());  // persistence is off: the kept template is gone
  auto redis = server().connect();
  ASSERT_TRUE(
      redis->command({"SET", "relay:events:apps:blue:shop", "runtime: exec # blue\n"}).ok());
  EXPECT_TRUE(later->retryKeeps());
  EXPECT_EQ(get("relay:events:apps:blue:other"), "runtime: exec # other\n");
  EXPECT_EQ(later->recall("shop"), "runtime: exec # blue\n");
  EXPECT_FALSE(later->owed());
}

}  // namespace
}  // namespace relay::testing
