// `relay app ls --runtime sandbox` in-process: each app carries the real sandbox runtime's
// verdict (bwrap probed, relay-launcher found beside the test binary as beside an installed
// relay). An integration test: it needs bubblewrap and the static launcher, which the
// sanitizer build of the unit tests cannot link.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::run;
using testing::ScopedEnv;

TEST(AppAvailability, LsIncludesTheSandboxRuntimesVerdict) {
  // A TempDir is 0700: the sandbox's unprivileged user could not read the app.
  relay::testing::TempDir root;
  root.write("good/bin/h.sh", "#!/bin/sh\n", 0755);
  root.write("good/template.yaml",
             "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [x]}\n");
  const ScopedEnv no_runtime{"RELAY_RUNTIME", std::nullopt};
  const ScopedEnv no_redis{"REDIS_URI", "127.0.0.1:1"};  // the paused state unknown: fine
  const auto result =
      run({"app", "ls", "--json", "--apps", root.path().string(), "--runtime", "sandbox"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 1u) << result.out;
  EXPECT_EQ(json[0]["name"], "good");
  EXPECT_EQ(json[0]["loaded"], true);
  EXPECT_EQ(json[0]["available"], false);
  EXPECT_NE(json[0]["reason"].get<std::string>().find("not readable by the app's sandbox user"),
            std::string::npos)
      << json[0]["reason"];
}

}  // namespace
}  // namespace relay::cli
