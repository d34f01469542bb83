// `relay doctor` on this host (docs/deployment.md "relay doctor"), the real binary against a real
// redis-server: a host where everything works passes with exit 0; Redis refusing commands to an
// ACL user, an unreachable Redis and the docker runtime without a daemon each fail their check
// with the fix. (tests/deploy/container_test.py runs it in containers missing each sandbox layer.)
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

class Doctor : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    ::chmod(apps_.path().c_str(), 0755);
    apps_.write("hello/template.yaml",
                "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [hi]}\n");
    apps_.write("hello/bin/h.sh", "#!/bin/sh\necho hi\n", 0755);
    ::chmod((apps_.path() / "hello").c_str(), 0755);
    ::chmod((apps_.path() / "hello/bin").c_str(), 0755);
  }
  /// relay doctor --json; the checks by name, and the exit code.
  std::pair<int, nlohmann::json> doctor(const std::string& uri, const std::string& runtime,
                                        const std::string& launcher = "auto") {
    const BinaryRun run =
        runRelay({"doctor", "--json", "--apps", apps_.path().string(), "--runtime", runtime},
                 {"REDIS_URI=" + uri, "DOCKER_HOST=unix:///nonexistent.sock",
                  "RELAY_SANDBOX_LAUNCHER=" + launcher});
    nlohmann::json checks = nlohmann::json::object();
    const nlohmann::json report = nlohmann::json::parse(run.out);
    for (const auto& check : report["checks"]) {
      checks[check["name"].get<std::string>()] = check;
    }
    return {run.exit_code, checks};
  }

  TempDir apps_;
};

TEST_F(Doctor, AHostWhereEverythingWorksPassesEveryCheck) {
  const auto [code, checks] = doctor(server().uri(), "sandbox");
  EXPECT_EQ(code, 0) << checks.dump(2);
  for (const char* name : {"apps", "user namespaces", "proc mount", "cgroups", "sandbox", "redis",
                           "redis version", "redis commands"}) {
    EXPECT_EQ(checks[name]["status"], "ok") << name << ": " << checks[name].dump();
  }
  // Which launcher builds the sandboxes, and why (docs/runtimes.md "Native launcher"): the
  // test machine runs Relay as root with a kernel that has the new mount API.
  EXPECT_EQ(checks["sandbox launcher"]["status"], "ok");
  EXPECT_EQ(checks["sandbox launcher"]["detail"].get<std::string>().rfind("native (", 0), 0u)
      << checks["sandbox launcher"].dump();
  const auto [forced_code, forced] = doctor(server().uri(), "sandbox", "bwrap");
  EXPECT_EQ(forced_code, 0) << forced.dump(2);
  EXPECT_EQ(forced["sandbox launcher"]["detail"], "bwrap (RELAY_SANDBOX_LAUNCHER=bwrap)");
  // Its probes leave no key behind.
  auto keys = server().connect()->command({"KEYS", "relay:events:doctor*"});
  EXPECT_EQ(keys->size(), 0u);
}

TEST_F(Doctor, AnAclUserWithoutCommandsIsToldTheRuleThatAddsThem) {
  auto admin = server().connect();
  ASSERT_TRUE(admin
                  ->command({"ACL", "SETUSER", "narrow", "on", ">narrow-pw", "~*", "+@all",
                             "-evalsha", "-xautoclaim"})
                  .ok());
  const auto [code, checks] =
      doctor("redis://narrow:narrow-pw@127.0.0.1:" + std::to_string(server().port()), "process");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(checks["redis commands"]["status"], "fail");
  EXPECT_NE(checks["redis commands"]["detail"].get<std::string>().find("evalsha, xautoclaim"),
            std::string::npos)
      << checks["redis commands"].dump();
  EXPECT_NE(checks["redis commands"]["fix"].get<std::string>().find(
                "ACL SETUSER <user> +evalsha +xautoclaim"),
            std::string::npos);
  // The process runtime works anywhere, with a warning.
  EXPECT_EQ(checks["isolation"]["status"], "warn");
}

TEST_F(Doctor, AnUnreachableRedisAndNoDockerDaemonFailWithTheirFixes) {
  const auto [code, checks] = doctor("127.0.0.1:1", "docker");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(checks["redis"]["status"], "fail");
  EXPECT_NE(checks["redis"]["fix"].get<std::string>().find("REDIS_URI"), std::string::npos);
  EXPECT_EQ(checks["redis commands"]["status"], "skip");
  EXPECT_EQ(checks["docker daemon"]["status"], "fail");
  EXPECT_NE(checks["docker daemon"]["fix"].get<std::string>().find("DOCKER_HOST"),
            std::string::npos);
}

}  // namespace
}  // namespace relay::testing
