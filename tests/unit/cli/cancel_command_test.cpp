// `relay cancel`'s input checks, which run before Redis is reached (exit 2, the flag named,
// nothing changed), and an unreachable Redis (exit 1). The cancellations themselves run against
// real workers in tests/integration/faults/cancel_test.cpp.
#include <gtest/gtest.h>

#include "common/system_clock.h"
#include "fakes/temp_dir.h"
#include "http/server.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::CliRun;
using testing::ScopedEnv;

// A loopback port nothing listens on (bound, then released).
int unusedPort() {
  SystemClock clock;
  auto server = http::HttpServer::create({"127.0.0.1", 0}, {}, clock);
  EXPECT_TRUE(server.ok());
  return server.ok() ? (*server)->address().port : 1;
}

// Runs `relay cancel ARGS` against a Redis nobody listens on: an input error must be reported
// before any connection is tried (exit 2, not 1).
CliRun cancel(std::vector<std::string> args) {
  ScopedEnv uri("REDIS_URI", "127.0.0.1:" + std::to_string(unusedPort()));
  args.insert(args.begin(), "cancel");
  return testing::run(args);
}

void expectUsage(const CliRun& result, const std::string& says) {
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find(says), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(CancelCommand, NothingNamedIsAUsageErrorSayingWhatToName) {
  expectUsage(cancel({}), "name what to cancel: an invocation");
}

TEST(CancelCommand, AnIdThatIsNotAFullStreamIdIsAUsageError) {
  for (const char* bad : {"abc", "1700000000000", "1-x/shop/bin/a.sh", "x-0/shop"}) {
    expectUsage(cancel({bad}), "is not an invocation (expected <message-id>[/<app>[/<handler>]]");
  }
}

TEST(CancelCommand, AnInvocationMissingItsAppOrHandlerIsAUsageError) {
  for (const char* bad : {"1-0/", "1-0//bin/a.sh", "1-0/shop/", "1-0/*"}) {
    expectUsage(cancel({bad}), "expected <message-id>/<app> or <message-id>/<app>/<handler>");
  }
}

TEST(CancelCommand, TheFirstBadTargetStopsBeforeAnythingIsCancelled) {
  expectUsage(cancel({"1-0/shop/bin/a.sh", "nope"}), "\"nope\" is not an invocation");
}

TEST(CancelCommand, InvocationsAndAppTogetherAreAUsageError) {
  expectUsage(cancel({"1-0", "--app", "shop", "--since", "1h"}), "not both");
}

TEST(CancelCommand, SelectionFlagsWithoutAppAreAUsageError) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"1-0", "--handler", "bin/a.sh"},
        std::vector<std::string>{"1-0", "--since", "1h"},
        std::vector<std::string>{"1-0", "--from", "1-0"},
        std::vector<std::string>{"1-0", "--filter", "p.yaml"}}) {
    expectUsage(cancel(args), "select within --app NAME");
  }
}

TEST(CancelCommand, AppNeedsAWindow) {
  expectUsage(cancel({"--app", "shop"}), "--app needs a window: --since DURATION");
}

TEST(CancelCommand, AnAppNameWithASlashIsAUsageError) {
  expectUsage(cancel({"--app", "shop/bin/a.sh", "--since", "1h"}), "--app: \"shop/bin/a.sh\"");
}

TEST(CancelCommand, SinceAndFromToTogetherAreAUsageError) {
  expectUsage(cancel({"--app", "shop", "--since", "1h", "--to", "5-0"}),
              "--since or --from/--to: not both");
}

TEST(CancelCommand, ABadSinceNamesTheFlagAndWhatWasExpected) {
  for (const char* bad : {"soon", "0s", "-1h"}) {
    expectUsage(cancel({"--app", "shop", "--since", bad}),
                "--since: \"" + std::string(bad) + "\" is not a positive duration");
  }
}

TEST(CancelCommand, ABadWindowIdNamesTheFlag) {
  expectUsage(cancel({"--app", "shop", "--from", "yesterday"}),
              "--from: \"yesterday\" is not a stream id");
  expectUsage(cancel({"--app", "shop", "--to", "1-2-3"}), "--to: \"1-2-3\" is not a stream id");
}

TEST(CancelCommand, AWindowEndingBeforeItStartsIsAUsageError) {
  expectUsage(cancel({"--app", "shop", "--from", "5-0", "--to", "4-9"}),
              "--from 5-0 is after --to 4-9");
}

TEST(CancelCommand, AFilterFileThatCannotBeReadNamesTheFlagAndTheFile) {
  expectUsage(cancel({"--app", "shop", "--since", "1h", "--filter", "/nonexistent/p.yaml"}),
              "--filter: cannot read /nonexistent/p.yaml");
}

TEST(CancelCommand, AFilterThatIsNotAPatternIsReportedWithItsLine) {
  relay::testing::TempDir dir;
  const auto path = dir.write("p.yaml", "kind: [job]\nage: [{equals: 3}]\n");
  const CliRun result = cancel({"--app", "shop", "--since", "1h", "--filter", path.string()});
  expectUsage(result, "--filter: " + path.string() + " is not a valid pattern; nothing changed");
  EXPECT_NE(result.err.find(path.string() + ":2:"), std::string::npos) << result.err;
}

TEST(CancelCommand, UnreachableRedisFailsWithExit1) {
  const CliRun result = cancel({"1-0/shop/bin/a.sh"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("relay cancel: cannot reach Redis at 127.0.0.1:"), std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace relay::cli
