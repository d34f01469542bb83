#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "http/client.h"
#include "runtime/docker/docker_api.h"
#include "runtime/prewarm_pool.h"

namespace relay::runtime::docker {

/// A container created and started ahead of demand (docs/runtimes.md "Prewarmed containers"):
/// relay-launcher or a warm interpreter waits in it for exactly one hand-over on its attached
/// stdin. Relay holds the attach connection it will hand over on and read the output from.
/// Destroyed without being handed over, it is removed with everything in it.
class PrewarmedContainer final : public WarmSandbox {
 public:
  PrewarmedContainer(const DockerApi& api, std::function<void(std::string_view)> warn,
                     std::string id, http::HijackedConnection attach)
      : api_(api), warn_(std::move(warn)), id_(std::move(id)), attach_(std::move(attach)) {}
  ~PrewarmedContainer() override;
  PrewarmedContainer(const PrewarmedContainer&) = delete;
  PrewarmedContainer& operator=(const PrewarmedContainer&) = delete;

  /// Still waiting: its attach stream has nothing to read and has not ended (what waits for
  /// the hand-over prints nothing; a container that exited closes the stream). Never blocks.
  bool alive() const override;
  const std::string& id() const { return id_; }
  /// The attach connection, for the one invocation it serves; from then on the caller removes
  /// the container.
  http::HijackedConnection handOver();

 private:
  const DockerApi& api_;
  std::function<void(std::string_view)> warn_;
  std::string id_;
  http::HijackedConnection attach_;
  bool handed_over_ = false;
};

}  // namespace relay::runtime::docker
