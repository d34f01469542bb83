// An app with an `image` under the sandbox runtime (docs/runtimes.md "Image roots"): its
// handlers run on the image's root file system, unpacked from the docker daemon's export or an
// OCI layout, cold here (the suites of the same binary run everything prewarmed on images).
#include <fcntl.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "integration/runtime/runtime_harness.h"
#include "integration/runtime/sandbox_harness.h"
#include "runtime/image/image_layers.h"
#include "runtime/image/tar_reader.h"
#include "support/image_builder.h"

namespace relay::runtime::testing {
namespace {

namespace fs = std::filesystem;

class SandboxImage : public ::testing::Test {
 protected:
  Result<Outcome> run(const InvocationSpec& spec) { return runtime_->run(spec, sink_); }
  std::string output(const InvocationSpec& spec) const {
    return sink_.text("[" + spec.app + "/" + spec.handler + "] ");
  }
  InvocationSpec script(const std::string& body, const std::string& image) {
    app_.script("bin/h.sh", body);
    InvocationSpec spec = app_.spec(Language::kExec, "bin/h.sh");
    spec.image = image;
    return spec;
  }
  std::string execImage() const { return dockerTestSettings().default_images.exec; }

  SystemClock clock_;
  std::unique_ptr<SandboxRuntime> runtime_ = makeSandboxTestRuntime(clock_);
  TestApp app_;
  CollectingSink sink_;
};

TEST_F(SandboxImage, RunsOnTheImagesRootNotTheHosts) {
  // The exec test image is busybox alone: no /usr, none of the host's programs.
  const InvocationSpec spec =
      script("ls /; test -e /usr/bin/bwrap && echo host-usr; test -x /bin/busybox && echo busybox",
             execImage());
  const Availability available = runtime_->availability(spec);
  ASSERT_TRUE(available.available) << available.reason;
  auto daemon = makeDockerTestRuntime(clock_);
  ASSERT_NE(daemon, nullptr);
  EXPECT_EQ(available.image_digest, **daemon->api().imageId(execImage()));
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason << output(spec);
  const std::string out = output(spec);
  EXPECT_EQ(out.find("usr"), std::string::npos) << out;
  EXPECT_EQ(out.find("host-usr"), std::string::npos) << out;
  EXPECT_NE(out.find("busybox"), std::string::npos) << out;
  EXPECT_EQ(runtime_->prewarmedRuns(), 0u);
}

TEST_F(SandboxImage, PythonSeesTheImagesPackagesNotTheHosts) {
  // PyYAML is installed on the test host (python3-yaml); the python3 test image has only the
  // standard library.
  app_.file("probe.py",
            "import sys\n"
            "def fn(event):\n"
            "    try:\n"
            "        import yaml\n"
            "        print('yaml from', yaml.__file__)\n"
            "    except ImportError:\n"
            "        print('no yaml')\n");
  InvocationSpec on_image = app_.spec(Language::kPython3, "probe.fn");
  on_image.image = testImage(Language::kPython3);
  const auto image_outcome = run(on_image);
  ASSERT_TRUE(image_outcome.ok()) << image_outcome.error().message;
  EXPECT_TRUE(image_outcome->succeeded) << image_outcome->reason << output(on_image);
  EXPECT_EQ(output(on_image), "no yaml");
  const InvocationSpec on_host = app_.spec(Language::kPython3, "probe.fn");
  CollectingSink host_sink;
  const auto host_outcome = runtime_->run(on_host, host_sink);
  ASSERT_TRUE(host_outcome.ok());
  EXPECT_NE(host_sink.text("").find("yaml from /usr/lib/python3/dist-packages"), std::string::npos)
      << "the control: the host has python3-yaml";
}

TEST_F(SandboxImage, AnImageWithoutTheAppsInterpreterMakesItUnavailable) {
  app_.file("h.py", "def fn(event):\n    pass\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "h.fn");
  spec.image = execImage();
  const Availability available = runtime_->availability(spec);
  EXPECT_FALSE(available.available);
  EXPECT_NE(available.reason.find("has no python3"), std::string::npos) << available.reason;
  const auto outcome = run(spec);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
}

TEST_F(SandboxImage, AMissingImageIsUnavailableAndNothingRuns) {
  const InvocationSpec spec =
      script("echo ran", "relay-test/no-such-image:" + std::to_string(::getpid()));
  const Availability available = runtime_->availability(spec);
  EXPECT_FALSE(available.available);
  EXPECT_NE(available.reason.find("not present in the docker daemon"), std::string::npos)
      << available.reason;
  const auto outcome = run(spec);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
  EXPECT_FALSE(sink_.contains("ran"));
}

// The exec test image as an OCI layout with gzip layers, written from the daemon's export.
std::string ociLayoutOf(const std::string& image, const fs::path& dir, Clock& clock) {
  auto daemon = makeDockerTestRuntime(clock);
  if (daemon == nullptr) return {};
  const auto id = daemon->api().imageId(image);
  if (!id.ok() || !*id) return {};
  image::ArchiveStager stager(dir / "export");
  image::TarReader reader(stager);
  fs::create_directories(dir / "export");
  const auto exported = daemon->api().exportImage(
      **id, [&reader](std::string_view bytes) { return reader.feed(bytes); },
      clock.monotonicNow() + std::chrono::minutes(2));
  if (!exported.ok()) return {};
  const auto layers = image::readDockerArchive(dir / "export", **id);
  if (!layers.ok()) return {};
  std::vector<std::string> tars;
  for (const image::LayerBlob& layer : layers->layers) {
    std::ifstream in(layer.file, std::ios::binary);
    tars.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  relay::testing::writeOciLayout(dir / "layout", tars, /*gzip=*/true, "busybox");
  return "oci:" + (dir / "layout").string() + ":busybox";
}

TEST_F(SandboxImage, AnOciLayoutDirectoryNeedsNoDaemon) {
  relay::testing::TempDir dir;
  const std::string reference = ociLayoutOf(execImage(), dir.path(), clock_);
  ASSERT_FALSE(reference.empty()) << "could not export " << execImage();
  // No daemon at all: the layout is all there is.
  SandboxSettings settings = sandboxTestSettings();
  settings.prewarm = false;
  settings.image_cache.dir = testImageCache();
  settings.docker_host = "unix://" + (dir.path() / "no-daemon.sock").string();
  auto sandbox = SandboxRuntime::create(clock_, settings);
  const InvocationSpec spec = script("busybox | head -n 1; ls /", reference);
  const auto outcome = sandbox->run(spec, sink_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason << output(spec);
  EXPECT_NE(output(spec).find("BusyBox"), std::string::npos) << output(spec);
  // A name the daemon would resolve is unavailable here, with the reason.
  const Availability by_name = sandbox->availability(script("true", execImage()));
  EXPECT_FALSE(by_name.available);
  EXPECT_NE(by_name.reason.find("no-daemon.sock"), std::string::npos) << by_name.reason;
}

TEST_F(SandboxImage, AnImageWhoseLayerFailsItsDigestIsUnavailableAndNothingRuns) {
  relay::testing::TempDir dir;
  const std::string reference = ociLayoutOf(execImage(), dir.path(), clock_);
  ASSERT_FALSE(reference.empty()) << "could not export " << execImage();
  // busybox's layer swapped for one whose /bin/sh would print "tampered": the manifest (the
  // image's digest) is unchanged, the layer's bytes no longer match the digest it names.
  const std::string evil =
      relay::testing::gzipped(relay::testing::TarBuilder()
                                  .file("bin/sh", "#!/bin/busybox sh\necho tampered\n", 0755)
                                  .finish());
  int swapped = 0;
  for (const auto& blob : fs::directory_iterator(dir.path() / "layout/blobs/sha256")) {
    if (fs::file_size(blob.path()) > 100'000) {  // the layer, not the manifest or config
      std::ofstream(blob.path(), std::ios::binary | std::ios::trunc) << evil;
      ++swapped;
    }
  }
  ASSERT_EQ(swapped, 1);
  // A cache of its own: the other tests' caches may hold this digest, unpacked from the
  // untampered layout.
  relay::testing::TempDir cache;
  SandboxSettings settings = sandboxTestSettings();
  settings.prewarm = false;
  settings.image_cache.dir = cache.path() / "images";
  settings.docker_host = dockerTestSettings().docker_host;
  auto sandbox = SandboxRuntime::create(clock_, settings);
  const InvocationSpec spec = script("echo ran", reference);
  const Availability available = sandbox->availability(spec);
  EXPECT_FALSE(available.available);
  EXPECT_NE(available.reason.find("digest"), std::string::npos) << available.reason;
  const auto outcome = sandbox->run(spec, sink_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
  EXPECT_FALSE(sink_.contains("ran"));
  EXPECT_FALSE(sink_.contains("tampered"));
  // Nothing of it is left in the cache: only the staging area's parent remains, empty.
  for (const auto& entry : fs::directory_iterator(settings.image_cache.dir)) {
    ADD_FAILURE() << "left in the cache: " << entry.path();
  }
}

}  // namespace
}  // namespace relay::runtime::testing
