#include "runtime/docker/container_config.h"

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "runtime/handler_command.h"
#include "runtime/handover.h"

namespace relay::runtime::docker {
namespace {

// The daemon resolves a bind source on its own filesystem, relative to nothing.
std::string absoluteAppDir(const std::filesystem::path& dir) {
  std::error_code error;
  const auto absolute = std::filesystem::absolute(dir, error);
  return (error ? dir : absolute).lexically_normal().string();
}

}  // namespace

Result<std::string> socketPathFromDockerHost(std::string_view docker_host) {
  constexpr std::string_view kScheme = "unix://";
  if (docker_host.substr(0, kScheme.size()) != kScheme) {
    const std::size_t scheme_end = docker_host.find("://");
    const std::string scheme = scheme_end == std::string_view::npos
                                   ? std::string("no scheme")
                                   : "scheme " + std::string(docker_host.substr(0, scheme_end));
    return Error::invalid("DOCKER_HOST '" + std::string(docker_host) + "' has " + scheme +
                          "; the docker runtime only supports a local daemon socket, "
                          "unix:///path/to/docker.sock");
  }
  std::string path(docker_host.substr(kScheme.size()));
  if (path.empty() || path.front() != '/') {
    return Error::invalid("DOCKER_HOST '" + std::string(docker_host) +
                          "' does not name an absolute socket path (expected "
                          "unix:///path/to/docker.sock)");
  }
  return path;
}

const std::string& DefaultImages::forLanguage(Language language) const {
  switch (language) {
    case Language::kPython3:
      return python3;
    case Language::kNode:
      return node;
    case Language::kExec:
      break;
  }
  return exec;
}

const std::string& imageFor(const InvocationSpec& spec, const DefaultImages& defaults) {
  return spec.image.empty() ? defaults.forLanguage(spec.language) : spec.image;
}

std::string containerCreateBody(const InvocationSpec& spec, const ContainerOptions& options) {
  using nlohmann::json;
  json env = json::array();
  for (const std::string& var : options.env ? *options.env : handlerEnvironmentStrings(spec)) {
    env.push_back(var);
  }
  json labels = json::object();
  for (const auto& [key, value] : options.labels) labels[key] = value;

  // A mount rather than a `Binds` string: an app path containing ':' or ',' stays intact, and a
  // missing directory is an error instead of being created by the daemon.
  json mounts = json::array({{{"Type", "bind"},
                              {"Source", absoluteAppDir(spec.app_dir)},
                              {"Target", "/app"},
                              {"ReadOnly", true}}});
  if (!options.launcher.empty()) {
    mounts.push_back({{"Type", "bind"},
                      {"Source", options.launcher},
                      {"Target", kLauncherMount},
                      {"ReadOnly", true}});
  }
  json host = {
      {"Mounts", std::move(mounts)},
      {"NetworkMode", spec.network ? "default" : "none"},
      {"ReadonlyRootfs", true},
      {"Tmpfs", {{"/tmp", options.tmpfs_options}}},
      {"CapDrop", json::array({"ALL"})},
      {"SecurityOpt", json::array({"no-new-privileges"})},
      {"Memory", spec.resources.memory_bytes},
      {"MemorySwap", spec.resources.memory_bytes},  // equal to Memory: no swap on top
      {"NanoCpus", static_cast<std::int64_t>(std::llround(spec.resources.cpus * 1e9))},
      {"PidsLimit", spec.resources.pids},
      {"Init", options.init},
      {"AutoRemove", false},  // the runtime reads the exit state, then removes it itself
      // Output reaches Relay through attach; the daemon keeps no copy on disk.
      {"LogConfig", {{"Type", "none"}, {"Config", json::object()}}},
  };
  json body = {
      {"Image", options.image},
      {"Cmd", options.command ? *options.command : handlerCommand(spec, "/app")},
      {"Entrypoint", json::array({""})},  // [""] resets the image's entrypoint
      {"Env", std::move(env)},
      {"WorkingDir", "/app"},
      {"User", std::to_string(options.user) + ":" + std::to_string(options.user)},
      {"Labels", std::move(labels)},
      {"AttachStdin", true},
      {"AttachStdout", true},
      {"AttachStderr", true},
      {"OpenStdin", true},
      {"StdinOnce", true},
      {"Tty", false},
      {"HostConfig", std::move(host)},
  };
  // Replace invalid UTF-8 instead of throwing: env values and paths are arbitrary bytes.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string percentEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~' || c == ':' || c == '@' || (keep_slash && c == '/');
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

}  // namespace relay::runtime::docker
