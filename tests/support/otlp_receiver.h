#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "fakes/temp_dir.h"
#include "support/spawned_process.h"

namespace relay::testing {

/// A real OTLP/HTTP receiver (tests/support/otlp_receiver.py under Debian's /usr/bin/python3
/// with python3-opentelemetry-proto) on a free loopback port; the spans it received, decoded
/// from protobuf, as JSON objects. Killed at destruction.
class OtlpReceiver {
 public:
  OtlpReceiver() {
    process_ = std::make_unique<SpawnedProcess>(
        std::vector<std::string>{"/usr/bin/python3", OTLP_RECEIVER_SCRIPT, spansPath()},
        std::vector<std::string>{}, (dir_.path() / "receiver.log").string());
    SpawnedProcess::waitUntil([this] { return port() > 0; }, std::chrono::seconds(20));
  }

  /// The port it listens on; 0 until it printed it.
  int port() const {
    std::istringstream first(process_->log());
    int port = 0;
    first >> port;
    return port;
  }
  /// OTEL_EXPORTER_OTLP_ENDPOINT for it.
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port()); }
  std::string log() const { return process_->log(); }

  /// Every span received so far.
  std::vector<nlohmann::json> spans() const {
    std::ifstream in(spansPath());
    std::vector<nlohmann::json> spans;
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) spans.push_back(nlohmann::json::parse(line));
    }
    return spans;
  }
  /// Waits (bounded) until `condition` holds for the spans received.
  bool waitFor(const std::function<bool(const std::vector<nlohmann::json>&)>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) const {
    return SpawnedProcess::waitUntil([&] { return condition(spans()); }, timeout);
  }

 private:
  std::string spansPath() const { return (dir_.path() / "spans.jsonl").string(); }

  TempDir dir_;
  std::unique_ptr<SpawnedProcess> process_;
};

}  // namespace relay::testing
