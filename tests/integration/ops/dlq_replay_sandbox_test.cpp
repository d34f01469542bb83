// `relay dlq replay` on the default sandbox runtime (bubblewrap): the handler runs isolated,
// with RELAY_TRIGGER=replay and the recorded event on stdin.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

class DlqReplaySandbox : public RedisTest {};

TEST_F(DlqReplaySandbox, ReplaysInTheSandboxAndRemovesTheEntry) {
  TempDir apps;
  ::chmod(apps.path().c_str(), 0755);
  apps.write("shop/template.yaml",
             "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [order]}\n");
  apps.write("shop/bin/h.sh",
             "#!/bin/sh\nread -r event\necho \"trigger=$RELAY_TRIGGER event=$event uid=$(id -u)\"\n"
             "case \"$event\" in *fail*) exit 4;; esac\n",
             0755);
  ::chmod((apps.path() / "shop").c_str(), 0755);
  ::chmod((apps.path() / "shop/bin").c_str(), 0755);
  auto redis = server().connect();
  const auto add = [&](const std::string& event) {
    return std::string(*redis
                            ->command({"XADD",
                                       "relay:events:dlq",
                                       "*",
                                       "original_stream",
                                       "events",
                                       "original_id",
                                       "1-0",
                                       "group",
                                       "relay",
                                       "consumer",
                                       "c",
                                       "event",
                                       event,
                                       "reason",
                                       "exit 4",
                                       "app",
                                       "shop",
                                       "handler",
                                       "bin/h.sh",
                                       "deliveries",
                                       "5",
                                       "handler_attempts",
                                       "5",
                                       "timestamp",
                                       "2026-01-01T00:00:00.000Z"})
                            ->string());
  };
  const std::vector<std::string> env = {"REDIS_URI=" + server().uri(),
                                        "RELAY_APPS=" + apps.path().string()};
  const std::string failing = add(R"({"kind":"order","fail":1})");
  BinaryRun run = runRelay({"dlq", "replay", failing}, env);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("failed (exit 4"), std::string::npos) << run.err;

  const std::string good = add(R"({"kind":"order"})");
  run = runRelay({"dlq", "replay", good}, env);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find(R"([shop/bin/h.sh] trigger=replay event={"kind":"order"} uid=)"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find(" uid=0\n"), std::string::npos) << "handlers never run as root";
  EXPECT_EQ(*redis->command({"XLEN", "relay:events:dlq"})->integer(), 1);  // only `failing`
}

}  // namespace
}  // namespace relay::testing
