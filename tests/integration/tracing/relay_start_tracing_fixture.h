#pragma once

// `relay start` (the real binary) exporting to a real OTLP/HTTP receiver, with a real
// redis-server and one app whose handler prints the trace context it was given. The runtime is
// RELAY_TRACING_RUNTIME (process, sandbox or docker), so the same test runs on each backend.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fakes/temp_dir.h"
#include "support/otlp_receiver.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

#ifndef RELAY_TRACING_RUNTIME
#define RELAY_TRACING_RUNTIME "process"
#endif

namespace relay::testing {

inline constexpr const char* kTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";
inline constexpr const char* kProducerTraceparent =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

class RelayStartTracing : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    std::string image;
    if (std::string(RELAY_TRACING_RUNTIME) == "docker") {
      const char* exec_image = std::getenv("RELAY_TEST_DOCKER_EXEC_IMAGE");
      image = std::string("image: ") +
              (exec_image && *exec_image ? exec_image : "relay-test/exec:latest") + "\n";
    }
    apps_.write("shop/template.yaml",
                "runtime: exec\n" + image + R"(env: {TRACEPARENT: from-the-template}
events:
  - handler: bin/record.sh
    pattern: {kind: [order]}
  - handler: bin/fail.sh
    pattern: {kind: [order], fail: [true]}
    retries: 0
)");
    // The handler's stdout reaches relay's log with the `[shop/bin/record.sh] ` prefix on every
    // runtime (a container or the sandbox cannot write to the test's files).
    apps_.write("shop/bin/record.sh",
                "#!/bin/sh\necho \"saw $RELAY_MESSAGE_ID $TRACEPARENT ${TRACESTATE:-none}\"\n",
                0755);
    apps_.write("shop/bin/fail.sh", "#!/bin/sh\nexit 3\n", 0755);
    // The sandbox runs handlers as nobody: the app must be readable by others.
    for (const char* dir : {"", "shop", "shop/bin"}) ::chmod((apps_.path() / dir).c_str(), 0755);
    ::chmod((apps_.path() / "shop/template.yaml").c_str(), 0644);
  }

  std::vector<std::string> environment() {
    return {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
            std::string("RELAY_RUNTIME=") + RELAY_TRACING_RUNTIME, "RELAY_HTTP_ADDR=127.0.0.1:0",
            "RELAY_LOG_LEVEL=debug"};
  }
  /// `relay start` with tracing to the receiver (plus `extra` variables).
  std::unique_ptr<SpawnedProcess> start(std::vector<std::string> extra = {}) {
    std::vector<std::string> env = environment();
    env.insert(env.end(), {"OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver_.endpoint(),
                           "OTEL_SERVICE_NAME=relay-e2e", "OTEL_BSP_SCHEDULE_DELAY=100"});
    env.insert(env.end(), extra.begin(), extra.end());
    auto relay = std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_BINARY, "start"},
                                                  env, (logs_.path() / "relay.log").string());
    EXPECT_TRUE(relay->waitForLog("relay started")) << relay->log();
    return relay;
  }
  std::string xadd(std::vector<std::string> fields) {
    std::vector<std::string> command = {"XADD", "events", "*"};
    command.insert(command.end(), fields.begin(), fields.end());
    return std::string(*redis_->command(command)->string());
  }
  /// Publishes an order with the producer's traceparent and `tracestate: vendor=abc`, waits
  /// for record.sh to print what it saw; returns the message id and that line.
  std::pair<std::string, std::string> publishTraced(const SpawnedProcess& relay) {
    const std::string id = xadd({"event", R"({"kind":"order"})", "traceparent",
                                 kProducerTraceparent, "tracestate", "vendor=abc"});
    return {id, handlerSaw(relay, id)};
  }
  /// What record.sh printed for message `id` (`<TRACEPARENT> <TRACESTATE|none>`), waiting for it.
  static std::string handlerSaw(const SpawnedProcess& relay, const std::string& id) {
    const std::string needle = "[shop/bin/record.sh] saw " + id + " ";
    std::string line;
    SpawnedProcess::waitUntil(
        [&] {
          const std::string log = relay.log();
          const std::size_t at = log.find(needle);
          if (at == std::string::npos) return false;
          const std::size_t start = at + needle.size();
          line = log.substr(start, log.find('\n', start) - start);
          return true;
        },
        std::chrono::seconds(60));
    return line;
  }
  /// The shared objects mapped into process `pid`.
  static std::string mappedFiles(pid_t pid) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::stringstream text;
    text << maps.rdbuf();
    return text.str();
  }
  long long pending() {
    auto reply = redis_->command({"XPENDING", "events", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  }
  /// The received spans of message `id`.
  static std::vector<nlohmann::json> spansOf(const std::vector<nlohmann::json>& spans,
                                             const std::string& id) {
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& span : spans) {
      if (span["attributes"].value("messaging.message.id", "") == id) out.push_back(span);
    }
    return out;
  }
  /// The first span whose name starts with `prefix`, or null.
  static const nlohmann::json* named(const std::vector<nlohmann::json>& spans,
                                     const std::string& prefix) {
    for (const nlohmann::json& span : spans) {
      if (span["name"].get<std::string>().rfind(prefix, 0) == 0) return &span;
    }
    return nullptr;
  }

  OtlpReceiver receiver_;
  std::unique_ptr<redis::Connection> redis_;
  TempDir apps_;
  TempDir logs_;
};

}  // namespace relay::testing
