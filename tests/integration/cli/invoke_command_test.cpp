// `relay app invoke` in-process, running real handlers through the process and sandbox runtimes.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli.h"
#include "fakes/temp_dir.h"

namespace relay::cli {
namespace {

struct Ran {
  int exit_code;
  std::string out;
  std::string err;
};

class AppInvoke : public ::testing::Test {
 protected:
  void SetUp() override {
    ::chmod(apps_.path().c_str(), 0755);
    apps_.write("shop/template.yaml", R"(runtime: exec
events:
  - handler: bin/ok.sh
    pattern: {kind: [order]}
  - handler: bin/fail.sh
    pattern: {kind: [order], amount: [{gt: 100}]}
  - handler: bin/env.sh
    pattern: {kind: [env]}
  - handler: bin/forge.sh
    pattern: {kind: [forge]}
)");
    apps_.write("shop/bin/ok.sh", "#!/bin/sh\necho \"got $(cat)\"\n", 0755);
    apps_.write("shop/bin/fail.sh", "#!/bin/sh\necho too big >&2\nexit 4\n", 0755);
    apps_.write("shop/bin/env.sh",
                "#!/bin/sh\necho trigger=$RELAY_TRIGGER attempt=$RELAY_ATTEMPT\n", 0755);
    apps_.write("shop/bin/forge.sh",
                "#!/bin/sh\nprintf 'ok\\r[other/app] forged \\033[31mred\\tend\\n'\n", 0755);
    for (const char* dir : {"shop", "shop/bin"}) ::chmod((apps_.path() / dir).c_str(), 0755);
  }
  Ran run(std::vector<std::string> args, const std::string& runtime = "process") {
    std::vector<std::string> all = {"relay", "app", "invoke"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--apps", apps_.path().string(), "--runtime", runtime});
    std::vector<const char*> argv;
    for (const std::string& arg : all) argv.push_back(arg.c_str());
    std::ostringstream out, err;
    const int code = runCli(static_cast<int>(argv.size()), argv.data(), out, err);
    return {code, out.str(), err.str()};
  }
  relay::testing::TempDir apps_;
};

TEST_F(AppInvoke, HandlerOutputCannotDriveTheTerminal) {
  const Ran ran = run({"shop", "--event", R"({"kind":"forge"})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("[shop/bin/forge.sh] ok\\x0D[other/app] forged \\x1B[31mred\tend\n"),
            std::string::npos)
      << ran.out;
  EXPECT_EQ(ran.out.find('\r'), std::string::npos);
  EXPECT_EQ(ran.out.find('\x1b'), std::string::npos);
}

TEST_F(AppInvoke, RunsEachMatchingHandlerOnceAndPrintsItsOutcome) {
  const Ran ran = run({"shop", "--event", R"({"kind":"order","amount":5})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_NE(ran.out.find(R"([shop/bin/ok.sh] got {"kind":"order","amount":5})"), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("shop/bin/ok.sh: succeeded in "), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find("bin/fail.sh"), std::string::npos);
}

TEST_F(AppInvoke, AFailingHandlerMakesItExitOneWithTheReason) {
  const Ran ran = run({"shop", "--event", R"({"kind":"order","amount":500})"});
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("shop/bin/ok.sh: succeeded"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("shop/bin/fail.sh: failed (exit 4)"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("[shop/bin/fail.sh] too big"), std::string::npos) << ran.out;
}

TEST_F(AppInvoke, HandlersSeeTheManualTrigger) {
  const Ran ran = run({"shop", "--event", R"({"kind":"env"})"});
  EXPECT_EQ(ran.exit_code, 0);
  EXPECT_NE(ran.out.find("trigger=manual attempt=1"), std::string::npos) << ran.out;
}

TEST_F(AppInvoke, NothingMatchedIsAFailureThatSaysSo) {
  const Ran ran = run({"shop", "--event", R"({"kind":"refund"})"});
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("no rule of shop matches"), std::string::npos) << ran.out;
}

TEST_F(AppInvoke, ReadsTheEventFromAFile) {
  const auto file = apps_.write("event.json", R"({"kind":"order"})");
  const Ran ran = run({"shop", "--event", "@" + file.string()});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("succeeded"), std::string::npos);
}

TEST_F(AppInvoke, BadInputIsAUsageError) {
  EXPECT_EQ(run({"shop", "--event", "{not json"}).exit_code, 2);
  EXPECT_EQ(run({"shop", "--event", "[1]"}).exit_code, 2);
  EXPECT_EQ(run({"shop", "--event", "@/nonexistent/file.json"}).exit_code, 2);
  const Ran bad_runtime = run({"shop", "--event", "{}"}, "kubernetes");
  EXPECT_EQ(bad_runtime.exit_code, 2);
  EXPECT_NE(bad_runtime.err.find("--runtime"), std::string::npos) << bad_runtime.err;
}

TEST_F(AppInvoke, UnknownAppExitsOne) {
  const Ran ran = run({"nope", "--event", "{}"});
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.err.find("no app named \"nope\""), std::string::npos) << ran.err;
}

TEST_F(AppInvoke, RunsInTheSandboxToo) {
  const Ran ran = run({"shop", "--event", R"({"kind":"env"})"}, "sandbox");
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("trigger=manual"), std::string::npos) << ran.out;
}

}  // namespace
}  // namespace relay::cli
