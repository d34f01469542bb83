#include "cli/cli.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace relay::cli {
namespace {

struct CliRun {
  int exit_code;
  std::string out;
  std::string err;
};

CliRun run(std::vector<const char*> args) {
  args.insert(args.begin(), "relay");
  std::ostringstream out, err;
  const int code = runCli(static_cast<int>(args.size()), args.data(), out, err);
  return {code, out.str(), err.str()};
}

TEST(Cli, VersionPrintsTheProjectVersion) {
  const CliRun result = run({"version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.rfind("relay 0.", 0), 0u) << result.out;
}

TEST(Cli, HelpListsCommandsAndExitsZero) {
  const CliRun result = run({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("version"), std::string::npos) << result.out;
}

TEST(Cli, NoCommandIsAUsageError) {
  const CliRun result = run({});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_FALSE(result.err.empty());
}

TEST(Cli, UnknownCommandIsAUsageError) {
  const CliRun result = run({"frobnicate"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("frobnicate"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace relay::cli
