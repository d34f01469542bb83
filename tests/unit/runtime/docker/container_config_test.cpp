#include "runtime/docker/container_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace relay::runtime::docker {
namespace {

using nlohmann::json;

InvocationSpec execSpec() {
  InvocationSpec spec;
  spec.app = "billing";
  spec.app_dir = "/srv/apps/billing";
  spec.handler = "bin/on-insert.sh";
  spec.message_id = "1700000000000-0";
  spec.resources.memory_bytes = 128ULL << 20;
  spec.resources.cpus = 0.5;
  spec.resources.pids = 64;
  spec.app_env = {{"API_TOKEN", "s3cret"}};
  return spec;
}

json bodyOf(const InvocationSpec& spec, ContainerOptions options = {}) {
  if (options.image.empty()) options.image = "debian:12-slim";
  return json::parse(containerCreateBody(spec, options));
}

TEST(ContainerConfig, AppliesTheHardeningOfSectionFour) {
  const json host = bodyOf(execSpec())["HostConfig"];
  EXPECT_EQ(host["NetworkMode"], "none");
  EXPECT_EQ(host["ReadonlyRootfs"], true);
  EXPECT_EQ(host["CapDrop"], json::array({"ALL"}));
  EXPECT_EQ(host["SecurityOpt"], json::array({"no-new-privileges"}));
  EXPECT_EQ(host["Tmpfs"]["/tmp"], "rw,noexec,nosuid,size=64m");
  EXPECT_EQ(host["Init"], true);
  EXPECT_EQ(host["LogConfig"]["Type"], "none");
  const json mount = host["Mounts"][0];
  EXPECT_EQ(mount["Type"], "bind");
  EXPECT_EQ(mount["Source"], "/srv/apps/billing");
  EXPECT_EQ(mount["Target"], "/app");
  EXPECT_EQ(mount["ReadOnly"], true);
}

TEST(ContainerConfig, CarriesTheResourceLimits) {
  const json host = bodyOf(execSpec())["HostConfig"];
  EXPECT_EQ(host["Memory"], 128LL << 20);
  EXPECT_EQ(host["MemorySwap"], 128LL << 20);
  EXPECT_EQ(host["NanoCpus"], 500'000'000);
  EXPECT_EQ(host["PidsLimit"], 64);
}

TEST(ContainerConfig, NetworkEnabledUsesTheDaemonDefault) {
  InvocationSpec spec = execSpec();
  spec.network = true;
  EXPECT_EQ(bodyOf(spec)["HostConfig"]["NetworkMode"], "default");
}

TEST(ContainerConfig, RunsTheHandlerAsTheAppsUserInAppWithStdinAttached) {
  ContainerOptions options;
  options.user = 1879048200;
  const json body = bodyOf(execSpec(), options);
  EXPECT_EQ(body["Cmd"], json::array({"/app/bin/on-insert.sh"}));
  EXPECT_EQ(body["Entrypoint"], json::array({""}));
  EXPECT_EQ(body["WorkingDir"], "/app");
  EXPECT_EQ(body["User"], "1879048200:1879048200");
  EXPECT_EQ(body["Image"], "debian:12-slim");
  for (const char* flag : {"AttachStdin", "AttachStdout", "AttachStderr", "OpenStdin", "StdinOnce"})
    EXPECT_EQ(body[flag], true) << flag;
  EXPECT_EQ(body["Tty"], false);  // the attach stream must stay multiplexed
}

TEST(ContainerConfig, EnvironmentHasAppEnvAndRelayVariables) {
  const json env = bodyOf(execSpec())["Env"];
  const auto has = [&env](const std::string& entry) {
    return std::find(env.begin(), env.end(), entry) != env.end();
  };
  EXPECT_TRUE(has("API_TOKEN=s3cret"));
  EXPECT_TRUE(has("RELAY_APP=billing"));
  EXPECT_TRUE(has("RELAY_INVOCATION_ID=1700000000000-0/billing/bin/on-insert.sh"));
}

TEST(ContainerConfig, LabelsAreCopied) {
  ContainerOptions options;
  options.labels = {{"relay.app", "billing"}, {"relay.owner", "host/1/2"}};
  const json labels = bodyOf(execSpec(), options)["Labels"];
  EXPECT_EQ(labels["relay.app"], "billing");
  EXPECT_EQ(labels["relay.owner"], "host/1/2");
}

TEST(ContainerConfig, PythonAndNodeRunTheBootstrapFromApp) {
  InvocationSpec spec = execSpec();
  spec.language = Language::kPython3;
  spec.handler = "events.created.handler";
  const json cmd = bodyOf(spec)["Cmd"];
  EXPECT_EQ(cmd[0], "python3");
  EXPECT_EQ(cmd.back(), "/app");
  spec.language = Language::kNode;
  EXPECT_EQ(bodyOf(spec)["Cmd"][0], "node");
}

TEST(ContainerConfig, DefaultImagesFollowTheLanguage) {
  const DefaultImages defaults;
  InvocationSpec spec = execSpec();
  EXPECT_EQ(imageFor(spec, defaults), "debian:12-slim");
  spec.language = Language::kPython3;
  EXPECT_EQ(imageFor(spec, defaults), "python:3.12-slim");
  spec.language = Language::kNode;
  EXPECT_EQ(imageFor(spec, defaults), "node:20-slim");
  spec.image = "registry.local/custom:1";
  EXPECT_EQ(imageFor(spec, defaults), "registry.local/custom:1");
}

TEST(DockerHost, UnixSocketPathIsExtracted) {
  const auto path = socketPathFromDockerHost("unix:///var/run/docker.sock");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, "/var/run/docker.sock");
}

TEST(DockerHost, OtherSchemesAreRejectedWithTheReason) {
  for (const char* host : {"tcp://127.0.0.1:2375", "ssh://user@box", "npipe:////./pipe/docker"}) {
    const auto path = socketPathFromDockerHost(host);
    ASSERT_FALSE(path.ok()) << host;
    EXPECT_EQ(path.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(path.error().message.find("only supports a local daemon socket"), std::string::npos);
  }
  const auto tcp = socketPathFromDockerHost("tcp://127.0.0.1:2375");
  EXPECT_NE(tcp.error().message.find("scheme tcp"), std::string::npos) << tcp.error().message;
}

TEST(DockerHost, RelativeOrEmptyPathsAreRejected) {
  EXPECT_FALSE(socketPathFromDockerHost("unix://").ok());
  EXPECT_FALSE(socketPathFromDockerHost("unix://docker.sock").ok());
  EXPECT_FALSE(socketPathFromDockerHost("/var/run/docker.sock").ok());
}

TEST(PercentEncode, KeepsImageNamesAndEscapesTheRest) {
  EXPECT_EQ(percentEncode("relay-test/python3:latest", /*keep_slash=*/true),
            "relay-test/python3:latest");
  EXPECT_EQ(percentEncode("a/b c&d"), "a%2Fb%20c%26d");
  EXPECT_EQ(percentEncode("{\"label\":[\"x\"]}"), "%7B%22label%22:%5B%22x%22%5D%7D");
}

}  // namespace
}  // namespace relay::runtime::docker
