// Handlers that bring their own third-party packages (docs/apps.md "Dependencies"), end to end:
// the real `relay app invoke` on the sandbox and the docker runtime, with packages the test
// installs from the package registries. Python: Debian's python3-tabulate (pure Python; there is
// no PyPI here), its files laid out as `pip install --target` lays them out. node: `ms` from npm.
// Each is vendored into the app directory, or baked into an image built offline from the docker
// test images (scripts/lib/dockerd.sh) and removed afterwards.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fakes/temp_dir.h"
#include "integration/docker/docker_test_env.h"
#include "runtime/sandbox/sandbox_identities.h"

namespace relay::testing {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int code = -1;
  std::string output;  // stdout and stderr
};

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Ran shell(const std::string& command) {
  Ran ran;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return ran;
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) ran.output.append(buffer, got);
  const int status = ::pclose(pipe);
  ran.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

void makeReadable(const fs::path& root) {
  ::chmod(root.c_str(), 0755);
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    ::chmod(entry.path().c_str(), entry.is_directory() ? 0755 : 0644);
  }
}

// What Relay ignores of an image (docs/runtimes.md "Image roots"): a handler still runs, as
// the app's own uid (docs/runtimes.md "Identities") in /app, whatever the image's entrypoint,
// command, user and working directory say.
const std::string kIgnored = "ENTRYPOINT [\"/bin/false\"]\nCMD [\"never\"]\nUSER 0\nWORKDIR /tmp\n";

// What the tests of one process share, each made at its first use (ctest runs every test in a
// process of its own, so a test fetches and builds only what it needs): the packages and the
// images that carry them.
class Shared {
 public:
  Shared() { ::chmod(work_.path().c_str(), 0755); }
  ~Shared() {
    for (const std::string& image : images_) (void)shell("docker rmi -f " + image);
  }
  const fs::path& work() const { return work_.path(); }

  /// python3-tabulate's files from Debian's archive: tabulate.py and its metadata, the layout
  /// `pip install --target` makes.
  Result<fs::path> pythonPackages() {
    const fs::path packages = work() / "deb/root/usr/lib/python3/dist-packages";
    if (fs::exists(packages / "tabulate.py")) return packages;
    fs::create_directories(work() / "deb");
    const Ran apt = shell("cd " + quoted(work() / "deb") +
                          " && apt-get download python3-tabulate && dpkg-deb -x "
                          "python3-tabulate_*.deb root");
    if (apt.code != 0 || !fs::exists(packages / "tabulate.py")) {
      return Error::unavailable("apt-get download python3-tabulate: " + apt.output);
    }
    return packages;
  }
  /// `ms` from the npm registry.
  Result<fs::path> nodeModules() {
    const fs::path modules = work() / "npm/node_modules";
    if (fs::exists(modules / "ms/package.json")) return modules;
    const Ran npm = shell("npm install --prefix " + quoted(work() / "npm") +
                          " --no-audit --no-fund --ignore-scripts --no-package-lock ms@2.1.3");
    if (npm.code != 0 || !fs::exists(modules / "ms/package.json")) {
      return Error::unavailable("npm install ms: " + npm.output);
    }
    return modules;
  }
  /// The python3 test image with tabulate in /usr/lib/python3/dist-packages.
  Result<std::string> pythonImage() {
    auto packages = pythonPackages();
    if (!packages) return packages.error();
    const auto images = runtime::testing::dockerTestSettings().default_images;
    return image(
        "python3", *packages, "packages",
        "FROM " + images.python3 + "\nCOPY packages/ /usr/lib/python3/dist-packages/\n" + kIgnored);
  }
  /// The node test image with /node_modules/ms: ESM resolves packages only from node_modules
  /// beside or above the handler, and /app is the app's mount.
  Result<std::string> nodeImage() {
    auto modules = nodeModules();
    if (!modules) return modules.error();
    const auto images = runtime::testing::dockerTestSettings().default_images;
    return image("node", *modules, "node_modules",
                 "FROM " + images.node + "\nCOPY node_modules/ /node_modules/\n" + kIgnored);
  }

 private:
  Result<std::string> image(const std::string& kind, const fs::path& files, const std::string& name,
                            const std::string& dockerfile) {
    const std::string tag = "relay-test-deps/" + kind + ":" + std::to_string(::getpid());
    // Built once per process: both runtimes' tests use it when the suite runs as one process.
    if (std::find(images_.begin(), images_.end(), tag) != images_.end()) return tag;
    const fs::path context = work() / (kind + "-image");
    fs::create_directories(context);
    fs::copy(files, context / name, fs::copy_options::recursive);
    std::ofstream(context / "Dockerfile") << dockerfile;
    // The classic builder: FROM a local image needs no registry. Without its cache: the other
    // runtime's test builds the same steps in a process of its own, and its `docker rmi` at the
    // end deletes the untagged layers a build that reused them is still stacking on ("failed to
    // get digest ...: no such file or directory").
    const Ran built =
        shell("DOCKER_BUILDKIT=0 docker build --no-cache -q --label relay.test-deps=" +
              std::to_string(::getpid()) + " -t " + tag + " " + quoted(context));
    if (built.code != 0) return Error::unavailable("docker build " + tag + ": " + built.output);
    images_.push_back(tag);
    return tag;
  }

  TempDir work_;
  std::vector<std::string> images_;  // removed with the suite
};
Shared* shared = nullptr;

class Dependencies : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { shared = new Shared; }
  static void TearDownTestSuite() {
    delete shared;
    shared = nullptr;
  }
  void SetUp() override { ::chmod(apps_.path().c_str(), 0755); }

  /// What a shared step made, or the test fails with why not.
  template <typename T>
  static T made(Result<T> result) {
    EXPECT_TRUE(result.ok()) << result.error().message;
    return result.ok() ? *result : T{};
  }

  std::string runtime() const { return GetParam(); }
  /// Writes app `name`: `runtime:`, `extra` template keys, one rule for {"kind":"go"} running
  /// `handler`, and the handler's `file`.
  void app(const std::string& name, const std::string& language, const std::string& extra,
           const std::string& handler, const std::string& file, const std::string& code) {
    apps_.write(name + "/template.yaml", "runtime: " + language + "\n" + extra +
                                             "events:\n  - handler: " + handler +
                                             "\n    pattern: {kind: [go]}\n");
    apps_.write(name + "/" + file, code);
  }
  void pythonApp(const std::string& name, const std::string& extra) {
    app(name, "python3", extra, "handlers.table.render", "handlers/table.py",
        "import tabulate as package\n"
        "from tabulate import tabulate\n"
        "import os\n"
        "def render(event):\n"
        "    print(tabulate(event['rows'], headers=['name', 'qty'], tablefmt='github'))\n"
        "    print('tabulate from', package.__file__)\n"
        "    print('uid', os.getuid(), 'in', os.getcwd())\n");
  }
  void nodeApp(const std::string& name, const std::string& extra) {
    app(name, "node", extra, "handlers.duration.parse", "handlers/duration.mjs",
        "import ms from 'ms';\n"
        "import { createRequire } from 'module';\n"
        "export function parse(event) {\n"
        "  console.log(`${event.text} = ${ms(event.text)} ms`);\n"
        "  console.log('ms from ' + createRequire(import.meta.url).resolve('ms'));\n"
        "}\n");
  }
  /// `relay app invoke` of `name` on this test's runtime.
  Ran invoke(const std::string& name, const std::string& event) {
    makeReadable(apps_.path());
    return shell("RELAY_IMAGE_CACHE=" + quoted(shared->work() / "image-cache") + " " +
                 RELAY_BINARY + " app invoke " + name + " --apps " + quoted(apps_.path()) +
                 " --runtime " + runtime() + " --event " + quoted(event));
  }
  Ran inspect(const std::string& name) {
    return shell("RELAY_IMAGE_CACHE=" + quoted(shared->work() / "image-cache") + " " +
                 RELAY_BINARY + " app inspect " + name + " --apps " + quoted(apps_.path()) +
                 " --runtime " + runtime());
  }
  /// The image an app that vendors its packages runs on: none under the sandbox (the host's
  /// interpreter), the interpreter's test image under docker.
  std::string vendoredImage(runtime::Language language) const {
    if (runtime() == "sandbox") return "";
    const auto images = runtime::testing::dockerTestSettings().default_images;
    return "image: " + (language == runtime::Language::kNode ? images.node : images.python3) + "\n";
  }

  TempDir apps_;
};

const char* kRows = R"({"kind":"go","rows":[["apple",3],["pear",12]]})";
// What the handler prints, each line with relay's prefix.
const std::string kTable =
    "[report/handlers.table.render] | name   |   qty |\n"
    "[report/handlers.table.render] |--------|-------|\n"
    "[report/handlers.table.render] | apple  |     3 |\n"
    "[report/handlers.table.render] | pear   |    12 |\n";

TEST_P(Dependencies, APythonAppVendorsItsPackagesIntoTheAppDirectory) {
  // Not there otherwise: neither the host's python3 nor the python3 test image has it.
  ASSERT_NE(shell("/usr/bin/python3 -c 'import tabulate'").code, 0);
  pythonApp("report",
            vendoredImage(runtime::Language::kPython3) + "env: {PYTHONPATH: /app/vendor}\n");
  const fs::path packages = made(shared->pythonPackages());
  ASSERT_FALSE(packages.empty());
  fs::copy(packages, apps_.path() / "report/vendor", fs::copy_options::recursive);
  const Ran ran = invoke("report", kRows);
  ASSERT_EQ(ran.code, 0) << ran.output;
  EXPECT_NE(ran.output.find(kTable), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("tabulate from /app/vendor/tabulate.py"), std::string::npos)
      << ran.output;
}

TEST_P(Dependencies, APythonAppTakesItsPackagesFromItsImage) {
  const std::string image = made(shared->pythonImage());
  ASSERT_FALSE(image.empty());
  pythonApp("report", "image: " + image + "\n");
  const Ran ran = invoke("report", kRows);
  ASSERT_EQ(ran.code, 0) << ran.output;
  EXPECT_NE(ran.output.find(kTable), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("tabulate from /usr/lib/python3/dist-packages/tabulate.py"),
            std::string::npos)
      << ran.output;
  // The only app here gets the first id its name hashes to, on either runtime.
  const uid_t uid = runtime::SandboxIdentities().of("report");
  EXPECT_NE(ran.output.find("uid " + std::to_string(uid) + " in /app"), std::string::npos)
      << ran.output;
  const Ran shown = inspect("report");
  const Ran id = shell("docker image inspect --format '{{.Id}}' " + image);
  ASSERT_EQ(id.code, 0);
  EXPECT_NE(shown.output.find("image:        " + image + " (" +
                              id.output.substr(0, id.output.find('\n')) + ")"),
            std::string::npos)
      << shown.output;
}

TEST_P(Dependencies, ANodeAppVendorsNodeModulesIntoTheAppDirectory) {
  nodeApp("timer", vendoredImage(runtime::Language::kNode));
  const fs::path modules = made(shared->nodeModules());
  ASSERT_FALSE(modules.empty());
  fs::copy(modules, apps_.path() / "timer/node_modules", fs::copy_options::recursive);
  const Ran ran = invoke("timer", R"({"kind":"go","text":"2h"})");
  ASSERT_EQ(ran.code, 0) << ran.output;
  EXPECT_NE(ran.output.find("2h = 7200000 ms"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("ms from /app/node_modules/ms/index.js"), std::string::npos)
      << ran.output;
}

TEST_P(Dependencies, ANodeAppTakesItsPackagesFromItsImage) {
  const std::string image = made(shared->nodeImage());
  ASSERT_FALSE(image.empty());
  nodeApp("timer", "image: " + image + "\n");
  const Ran ran = invoke("timer", R"({"kind":"go","text":"1.5 days"})");
  ASSERT_EQ(ran.code, 0) << ran.output;
  EXPECT_NE(ran.output.find("1.5 days = 129600000 ms"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("ms from /node_modules/ms/index.js"), std::string::npos) << ran.output;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, Dependencies, ::testing::Values("sandbox", "docker"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
}  // namespace relay::testing
