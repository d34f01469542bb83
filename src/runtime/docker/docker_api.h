#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "http/client.h"

namespace relay::runtime::docker {

/// One container as GET /containers/json lists it.
struct ContainerSummary {
  std::string id;
  std::vector<std::string> names;  // as the daemon lists them: `/name`
  std::string state;               // created, running, exited...
  std::map<std::string, std::string> labels;
};

/// What GET /containers/{id}/json says about how a container ended.
struct ContainerState {
  bool started = false;  // it ran at some point (State.StartedAt is set)
  bool running = false;
  int exit_code = 0;
  bool oom_killed = false;
};

/// The Docker Engine API calls the docker runtime needs, over http::Client (src/http). Unversioned
/// paths: the daemon answers with its own API version, and these calls are stable across all
/// versions since 1.25. HTTP errors become typed Errors carrying the daemon's message:
/// 404 kNotFound, 400 kInvalidArgument, 5xx kUnavailable, others kInternal. Every call blocks
/// for at most `request_timeout` unless it takes an explicit deadline. Thread-safe.
class DockerApi {
 public:
  DockerApi(http::Client client, std::chrono::milliseconds request_timeout);

  /// GET /_ping.
  Status ping() const;
  /// GET /images/{name}/json: false when the daemon does not have it.
  Result<bool> imageExists(std::string_view image) const;
  /// The same, returning the image's ID (`sha256:` of its config); nullopt when the daemon
  /// does not have it.
  Result<std::optional<std::string>> imageId(std::string_view image) const;
  /// GET /images/{name}/get: the image as a `docker save` tar stream, passed to `sink` as it
  /// arrives (an image may be larger than memory). Blocks until `deadline`.
  Status exportImage(std::string_view image, http::ResponseParser::BodySink sink,
                     MonoTime deadline) const;
  /// POST /containers/create[?name=...]; returns the id. `body` may hold secrets: it is never
  /// put in an Error.
  Result<std::string> createContainer(const std::string& body, std::string_view name = {}) const;
  /// POST /containers/{id}/rename?name=...: a name another container has is kInternal (409).
  Status rename(std::string_view id, std::string_view name) const;
  /// POST /containers/{id}/attach with stdin, stdout and stderr, upgraded to a raw stream.
  Result<http::HijackedConnection> attach(std::string_view id) const;
  /// POST /containers/{id}/start.
  Status start(std::string_view id) const;
  /// POST /containers/{id}/kill?signal=...; a container that is no longer running is success.
  Status kill(std::string_view id, std::string_view signal) const;
  /// POST /containers/{id}/wait: blocks until the container exits (its exit code) or until
  /// `deadline` (kTimeout).
  Result<int> wait(std::string_view id, MonoTime deadline) const;
  /// GET /containers/{id}/json.
  Result<ContainerState> inspect(std::string_view id) const;
  /// DELETE /containers/{id}?force=true&v=true; a container that is already gone, or whose
  /// removal another caller already started, is success.
  Status remove(std::string_view id) const;
  /// GET /containers/json?all=true filtered by `label` (`key` or `key=value`).
  Result<std::vector<ContainerSummary>> listContainers(std::string_view label) const;
  /// The same filtered by name: every container whose name contains `name`.
  Result<std::vector<ContainerSummary>> listContainersNamed(std::string_view name) const;

 private:
  Result<http::Response> call(std::string method, std::string target, std::string body = {}) const;
  Result<std::vector<ContainerSummary>> list(const std::string& filter_key,
                                             std::string_view value) const;
  MonoTime deadline() const;

  http::Client client_;
  std::chrono::milliseconds request_timeout_;
};

/// The Error for a non-2xx reply: its kind from the status, the daemon's `message` field.
Error errorFromResponse(const http::Response& response, std::string_view what);

}  // namespace relay::runtime::docker
