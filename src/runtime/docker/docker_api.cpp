#include "runtime/docker/docker_api.h"

#include <nlohmann/json.hpp>

#include "common/printable.h"
#include "runtime/docker/container_config.h"

namespace relay::runtime::docker {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxMessageBytes = 400;

// Parses a reply body without exceptions; a non-object is an error naming the call.
Result<json> parseObject(const http::Response& response, std::string_view what) {
  json parsed = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error::internal("docker: " + std::string(what) + ": reply is not a JSON object");
  }
  return parsed;
}

std::string stringField(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The daemon's message, trimmed, cut and with control characters escaped.
std::string printableMessage(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  return printable(text.substr(0, kMaxMessageBytes)) +
         (text.size() > kMaxMessageBytes ? "..." : "");
}

bool isSuccess(int status) { return status >= 200 && status < 300; }

}  // namespace

Error errorFromResponse(const http::Response& response, std::string_view what) {
  json parsed = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  std::string message = parsed.is_object() ? stringField(parsed, "message") : std::string();
  if (message.empty()) message = response.body.empty() ? response.reason : response.body;
  message = "docker: " + std::string(what) + ": " + std::to_string(response.status) + " " +
            printableMessage(message);
  const int status = response.status;
  if (status == 404) return Error::notFound(std::move(message));
  if (status == 400) return Error::invalid(std::move(message));
  if (status >= 500) return Error::unavailable(std::move(message));
  return Error::internal(std::move(message));
}

DockerApi::DockerApi(http::Client client, std::chrono::milliseconds request_timeout)
    : client_(std::move(client)), request_timeout_(request_timeout) {}

MonoTime DockerApi::deadline() const { return client_.clock().monotonicNow() + request_timeout_; }

Result<http::Response> DockerApi::call(std::string method, std::string target,
                                       std::string body) const {
  return client_.send({std::move(method), std::move(target), std::move(body)}, deadline());
}

Status DockerApi::ping() const {
  auto response = call("GET", "/_ping");
  if (!response) return response.error();
  if (!isSuccess(response->status)) {
    // Transport errors name the daemon already (the client's peer); an HTTP error answer too.
    Error error = errorFromResponse(*response, "ping");
    return Error{error.kind, client_.peer() + ": " + error.message};
  }
  return {};
}

Result<bool> DockerApi::imageExists(std::string_view image) const {
  auto id = imageId(image);
  if (!id) return id.error();
  return id->has_value();
}

Result<std::optional<std::string>> DockerApi::imageId(std::string_view image) const {
  auto response = call("GET", "/images/" + percentEncode(image, /*keep_slash=*/true) + "/json");
  if (!response) return response.error();
  if (response->status == 404) return std::optional<std::string>();
  const std::string what = "inspecting image " + std::string(image);
  if (!isSuccess(response->status)) return errorFromResponse(*response, what);
  auto reply = parseObject(*response, what);
  if (!reply) return reply.error();
  std::string id = stringField(*reply, "Id");
  if (id.empty()) return Error::internal("docker: " + what + ": reply has no Id");
  return std::optional<std::string>(std::move(id));
}

Status DockerApi::exportImage(std::string_view image, http::ResponseParser::BodySink sink,
                              MonoTime until) const {
  auto response =
      client_.send({"GET", "/images/" + percentEncode(image, /*keep_slash=*/true) + "/get", {}},
                   until, std::move(sink));
  if (!response) return response.error();
  if (!isSuccess(response->status)) {
    return errorFromResponse(*response, "exporting image " + std::string(image));
  }
  return {};
}

Status DockerApi::rename(std::string_view id, std::string_view name) const {
  auto response =
      call("POST", "/containers/" + percentEncode(id) + "/rename?name=" + percentEncode(name));
  if (!response) return response.error();
  if (!isSuccess(response->status)) {
    return errorFromResponse(*response, "renaming container " + std::string(id));
  }
  return {};
}

Result<std::string> DockerApi::createContainer(const std::string& body,
                                               std::string_view name) const {
  auto response = call("POST",
                       name.empty() ? std::string("/containers/create")
                                    : "/containers/create?name=" + percentEncode(name),
                       body);
  if (!response) return response.error();
  if (!isSuccess(response->status)) return errorFromResponse(*response, "creating a container");
  auto reply = parseObject(*response, "creating a container");
  if (!reply) return reply.error();
  std::string id = stringField(*reply, "Id");
  if (id.empty()) return Error::internal("docker: creating a container: reply has no Id");
  return id;
}

Result<http::HijackedConnection> DockerApi::attach(std::string_view id) const {
  const std::string target =
      "/containers/" + percentEncode(id) + "/attach?stream=1&stdin=1&stdout=1&stderr=1";
  auto upgraded = client_.upgrade({"POST", target, {}}, deadline());
  if (!upgraded) return upgraded.error();
  auto& [response, connection] = *upgraded;
  if (response.status != 101 && response.status != 200) {
    // The error body came with the headers; that is all the message there is.
    response.body = std::move(connection.buffered);
    return errorFromResponse(response, "attaching to container " + std::string(id));
  }
  return std::move(connection);
}

Status DockerApi::start(std::string_view id) const {
  auto response = call("POST", "/containers/" + percentEncode(id) + "/start");
  if (!response) return response.error();
  if (!isSuccess(response->status)) {
    return errorFromResponse(*response, "starting container " + std::string(id));
  }
  return {};
}

Status DockerApi::kill(std::string_view id, std::string_view signal) const {
  auto response =
      call("POST", "/containers/" + percentEncode(id) + "/kill?signal=" + percentEncode(signal));
  if (!response) return response.error();
  if (response->status == 409) return {};  // not running any more: nothing to kill
  if (!isSuccess(response->status)) {
    return errorFromResponse(
        *response, "sending SIG" + std::string(signal) + " to container " + std::string(id));
  }
  return {};
}

Result<int> DockerApi::wait(std::string_view id, MonoTime until) const {
  auto response = client_.send({"POST", "/containers/" + percentEncode(id) + "/wait", {}}, until);
  if (!response) return response.error();
  const std::string what = "waiting for container " + std::string(id);
  if (!isSuccess(response->status)) return errorFromResponse(*response, what);
  auto reply = parseObject(*response, what);
  if (!reply) return reply.error();
  const auto it = reply->find("StatusCode");
  if (it == reply->end() || !it->is_number_integer()) {
    return Error::internal("docker: " + what + ": reply has no StatusCode");
  }
  return it->get<int>();
}

Result<ContainerState> DockerApi::inspect(std::string_view id) const {
  auto response = call("GET", "/containers/" + percentEncode(id) + "/json");
  if (!response) return response.error();
  const std::string what = "inspecting container " + std::string(id);
  if (!isSuccess(response->status)) return errorFromResponse(*response, what);
  auto reply = parseObject(*response, what);
  if (!reply) return reply.error();
  const auto state = reply->find("State");
  if (state == reply->end() || !state->is_object()) {
    return Error::internal("docker: " + what + ": reply has no State");
  }
  ContainerState result;
  const auto flag = [&state](const char* key) {
    const auto it = state->find(key);
    return it != state->end() && it->is_boolean() && it->get<bool>();
  };
  result.running = flag("Running");
  // The daemon reports a container that never ran with Go's zero time.
  const std::string started_at = stringField(*state, "StartedAt");
  result.started = result.running || (!started_at.empty() && started_at.rfind("0001-", 0) != 0);
  result.oom_killed = flag("OOMKilled");
  const auto code = state->find("ExitCode");
  if (code != state->end() && code->is_number_integer()) result.exit_code = code->get<int>();
  return result;
}

Status DockerApi::remove(std::string_view id) const {
  auto response = call("DELETE", "/containers/" + percentEncode(id) + "?force=true&v=true");
  if (!response) return response.error();
  if (response->status == 404) return {};
  // 409 while another caller's removal of it runs (a reaper, the daemon's own): gone soon.
  if (response->status == 409 && response->body.find("already in progress") != std::string::npos) {
    return {};
  }
  if (!isSuccess(response->status)) {
    return errorFromResponse(*response, "removing container " + std::string(id));
  }
  return {};
}

Result<std::vector<ContainerSummary>> DockerApi::listContainers(std::string_view label) const {
  return list("label", label);
}

Result<std::vector<ContainerSummary>> DockerApi::listContainersNamed(std::string_view name) const {
  return list("name", name);
}

Result<std::vector<ContainerSummary>> DockerApi::list(const std::string& filter_key,
                                                      std::string_view wanted) const {
  const std::string filters = json{{filter_key, json::array({std::string(wanted)})}}.dump();
  auto response = call("GET", "/containers/json?all=true&filters=" + percentEncode(filters));
  if (!response) return response.error();
  const std::string what = "listing containers by " + filter_key + " " + std::string(wanted);
  if (!isSuccess(response->status)) return errorFromResponse(*response, what);
  json reply = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_array()) {
    return Error::internal("docker: " + what + ": reply is not a JSON array");
  }
  std::vector<ContainerSummary> containers;
  for (const json& entry : reply) {
    if (!entry.is_object()) continue;
    ContainerSummary summary{stringField(entry, "Id"), {}, stringField(entry, "State"), {}};
    const auto names = entry.find("Names");
    if (names != entry.end() && names->is_array()) {
      for (const json& name : *names) {
        if (name.is_string()) summary.names.push_back(name.get<std::string>());
      }
    }
    const auto labels = entry.find("Labels");
    if (labels != entry.end() && labels->is_object()) {
      for (const auto& [key, value] : labels->items()) {
        if (value.is_string()) summary.labels[key] = value.get<std::string>();
      }
    }
    if (!summary.id.empty()) containers.push_back(std::move(summary));
  }
  return containers;
}

}  // namespace relay::runtime::docker
