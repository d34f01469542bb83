#include "cli/doctor_checks.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "cli/loaded_apps.h"
#include "http/client.h"
#include "invocation/keys.h"
#include "redis/connection.h"
#include "redis/errors.h"
#include "redis/script.h"
#include "runtime/docker/docker_api.h"
#include "runtime/sandbox/host_diagnosis.h"
#include "runtime/sandbox/sandbox_runtime.h"

namespace relay::cli {
namespace {

using Status = DoctorCheck::Status;

DoctorCheck fromLayer(std::string name, const runtime::LayerCheck& layer,
                      Status when_failed = Status::kFail) {
  return {std::move(name), layer.ok ? Status::kOk : when_failed, layer.detail, layer.fix};
}

// The Redis server's version from INFO server, "" when absent.
std::string redisVersion(redis::Connection& redis) {
  auto info = redis.command({"INFO", "server"});
  if (!info.ok() || !info->string().ok()) return {};
  std::istringstream lines{std::string(*info->string())};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("redis_version:", 0) == 0) {
      line = line.substr(14);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
  }
  return {};
}

// major * 100 + minor of "7.0.15"; 0 when unreadable.
int versionNumber(const std::string& version) {
  int major = 0, minor = 0;
  return std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2 ? major * 100 + minor : 0;
}

// Every command of relayRedisCommands() tried on keys of Relay's own; the ones the server
// refused with NOPERM (an ACL), and the other failures.
struct CommandProbe {
  std::vector<std::string> denied;
  std::vector<std::string> failed;
};

CommandProbe probeCommands(redis::Connection& redis, const invocation::StreamKeys& keys) {
  CommandProbe probe;
  const std::string base = keys.prefix() + "doctor:" + std::to_string(::getpid()) + ":";
  const std::string k = base + "k", h = base + "h", z = base + "z", s = base + "s", x = base + "x";
  const auto tried = [&](const std::string& name,
                         const std::vector<std::string>& argv) -> std::optional<std::string> {
    auto reply = redis.command(argv);
    if (reply.ok()) return reply->string().ok() ? std::string(*reply->string()) : std::string();
    if (redis::isReplyError(reply.error(), "NOPERM")) {
      probe.denied.push_back(name);
    } else {
      probe.failed.push_back(name + ": " + reply.error().message);
    }
    return std::nullopt;
  };
  const redis::Script one("return 1");
  tried("ping", {"PING"});
  tried("time", {"TIME"});
  tried("eval", {"EVAL", one.source(), "0"});
  tried("evalsha", {"EVALSHA", one.sha1(), "0"});
  tried("set", {"SET", k, "1", "PX", "60000"});
  tried("get", {"GET", k});
  tried("exists", {"EXISTS", k});
  tried("pexpire", {"PEXPIRE", k, "60000"});
  tried("hset", {"HSET", h, "f", "1"});
  tried("hgetall", {"HGETALL", h});
  tried("hincrby", {"HINCRBY", h, "n", "1"});
  tried("hget", {"HGET", h, "n"});  // the archiver's hash (docs/replay.md "Archive")
  tried("hexists", {"HEXISTS", h, "n"});
  tried("hdel", {"HDEL", h, "f"});
  tried("zadd", {"ZADD", z, "1", "m"});
  tried("zrangebyscore", {"ZRANGEBYSCORE", z, "-inf", "+inf"});
  tried("zcount", {"ZCOUNT", z, "-inf", "+inf"});
  tried("zrange", {"ZRANGE", z, "0", "0", "WITHSCORES"});
  tried("zcard", {"ZCARD", z});
  tried("zremrangebyscore", {"ZREMRANGEBYSCORE", z, "-inf", "-inf"});
  tried("zscore", {"ZSCORE", z, "m"});
  tried("zrem", {"ZREM", z, "m"});
  tried("zrangebylex", {"ZRANGEBYLEX", z, "-", "+"});
  tried("zlexcount", {"ZLEXCOUNT", z, "-", "+"});
  tried("sadd", {"SADD", s, "m"});
  tried("smembers", {"SMEMBERS", s});
  tried("smismember", {"SMISMEMBER", s, "m"});
  tried("sunion", {"SUNION", s});
  tried("srem", {"SREM", s, "m"});
  const auto id = tried("xadd", {"XADD", x, "*", "doctor", "1"}).value_or("0-1");
  tried("xlen", {"XLEN", x});
  tried("xrange", {"XRANGE", x, "-", "+"});
  tried("xrevrange", {"XREVRANGE", x, "+", "-", "COUNT", "1"});
  tried("xgroup", {"XGROUP", "CREATE", x, "doctor", "0"});
  tried("xreadgroup", {"XREADGROUP", "GROUP", "doctor", "doctor", "COUNT", "1", "STREAMS", x, ">"});
  tried("xpending", {"XPENDING", x, "doctor"});
  tried("xclaim", {"XCLAIM", x, "doctor", "doctor", "0", id});
  tried("xautoclaim", {"XAUTOCLAIM", x, "doctor", "doctor", "0", "0"});
  tried("xack", {"XACK", x, "doctor", id});
  tried("xinfo", {"XINFO", "CONSUMERS", x, "doctor"});
  tried("xinfo stream", {"XINFO", "STREAM", x});  // the archiver's gap check
  tried("xgroup delconsumer", {"XGROUP", "DELCONSUMER", x, "doctor", "doctor"});
  tried("xtrim", {"XTRIM", x, "MINID", "0"});
  tried("xdel", {"XDEL", x, id});
  tried("del", {"DEL", k, h, z, s, x});
  (void)redis.command({"DEL", k, h, z, s, x});  // best effort if DEL itself was denied
  return probe;
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

void redisChecks(const config::WorkerConfig& config, std::vector<DoctorCheck>& checks) {
  const std::string where = config.redis.describe();
  auto redis = redis::Connection::create(config.redis);
  if (!redis.ok()) {
    checks.push_back({"redis", Status::kFail, redis.error().message,
                      "check REDIS_URI (docs/operations.md \"Redis: where it is, TLS, ACL users, "
                      "Sentinel, Cluster\") and that Redis is up and reachable from here"});
    checks.push_back({"redis version", Status::kSkip, "Redis unreachable", {}});
    checks.push_back({"redis commands", Status::kSkip, "Redis unreachable", {}});
    return;
  }
  checks.push_back({"redis", Status::kOk, "reachable at " + where, {}});
  const std::string version = redisVersion(**redis);
  const int number = versionNumber(version);
  if (number >= 700) {
    checks.push_back({"redis version", Status::kOk, "Redis " + version, {}});
  } else if (number >= 602) {
    checks.push_back({"redis version", Status::kWarn,
                      "Redis " + version + ": runs, but XINFO reports no lag before 7.0",
                      "upgrade to Redis 7"});
  } else {
    checks.push_back({"redis version", Status::kFail,
                      "Redis " +
                          (version.empty() ? std::string("of an unknown version") : version) +
                          ": Relay needs XAUTOCLAIM (6.2) and HELLO",
                      "upgrade to Redis 7"});
  }
  const CommandProbe probe = probeCommands(**redis, {config.stream, config.group});
  if (!probe.denied.empty()) {
    std::string rule;
    for (const std::string& name : probe.denied) {
      std::string command = name;
      std::replace(command.begin(), command.end(), ' ', '|');
      rule += " +" + command;
    }
    checks.push_back({"redis commands", Status::kFail,
                      "the ACL user may not run: " + joined(probe.denied, ", "),
                      "ACL SETUSER <user>" + rule +
                          " (the whole rule: docs/operations.md \"An ACL user for Relay\")"});
  } else if (!probe.failed.empty()) {
    checks.push_back({"redis commands", Status::kFail, joined(probe.failed, "; "),
                      "see the errors: Redis refused commands Relay uses"});
  } else {
    checks.push_back({"redis commands",
                      Status::kOk,
                      std::to_string(relayRedisCommands().size()) +
                          " commands Relay uses answered, on keys of stream " + config.stream,
                      {}});
  }
}

void sandboxChecks(const std::vector<const app::AppEntry*>& networked,
                   runtime::SandboxLauncher launcher, Clock& clock,
                   std::vector<DoctorCheck>& checks) {
  const runtime::HostFacts facts = runtime::HostFacts::read();
  checks.push_back(fromLayer("user namespaces", runtime::checkUserNamespaces(facts)));
  checks.push_back(fromLayer("proc mount", runtime::checkProcMount(facts)));
  checks.push_back(fromLayer("cgroups", runtime::checkCgroups(facts)));
  // Last: it enters the writable cgroup view in this process, as relay start does.
  runtime::SandboxSettings settings;
  settings.sandbox_launcher = launcher;
  const auto sandbox = runtime::SandboxRuntime::create(clock, settings);
  const auto& tools = sandbox->tools();
  if (sandbox->hostProblem().empty()) {
    checks.push_back({"sandbox",
                      Status::kOk,
                      "bwrap (" + tools.bwrap +
                          ") started a sandbox with Relay's seccomp "
                          "filter and cgroup limits",
                      {}});
    // Which builds the sandboxes and why (docs/runtimes.md "Native launcher").
    checks.push_back({"sandbox launcher", Status::kOk, sandbox->launcherChoice(), {}});
  } else {
    const std::string& problem = sandbox->hostProblem();
    const auto at = problem.find("; fix: ");
    checks.push_back({"sandbox", Status::kFail, problem.substr(0, at),
                      at == std::string::npos
                          ? "see docs/deployment.md \"What each failure looks like\""
                          : problem.substr(at + 7)});
  }
  // pasta is needed by network: true apps only: a failure where none asks for it is a warning.
  std::string names;
  for (const app::AppEntry* entry : networked) names += (names.empty() ? "" : ", ") + entry->name;
  const Status when_failed = networked.empty() ? Status::kWarn : Status::kFail;
  const std::string needed = networked.empty() ? " (no app asks for network: true)"
                                               : " (network: true apps: " + names + ")";
  checks.push_back(fromLayer("tun device", runtime::checkTunDevice(facts), when_failed));
  if (!sandbox->hostProblem().empty()) {
    checks.push_back({"pasta", Status::kSkip, "the sandbox itself cannot start", {}});
  } else if (sandbox->networkProblem().empty()) {
    checks.push_back({"pasta", Status::kOk, "a network: true sandbox started under pasta", {}});
  } else {
    const std::string& problem = sandbox->networkProblem();
    const auto at = problem.find("; fix: ");
    checks.push_back({"pasta", when_failed, problem.substr(0, at) + needed,
                      at == std::string::npos ? "apt-get install passt; see the tun device check"
                                              : problem.substr(at + 7)});
  }
}

}  // namespace

const char* statusName(DoctorCheck::Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kWarn:
      return "warn";
    case Status::kFail:
      return "fail";
    case Status::kSkip:
      return "skip";
  }
  return "fail";
}

const std::vector<std::string>& relayRedisCommands() {
  // Tried in this order by probeCommands; keep the two in step.
  static const std::vector<std::string> commands = {"ping",         "time",
                                                    "eval",         "evalsha",
                                                    "set",          "get",
                                                    "exists",       "pexpire",
                                                    "hset",         "hgetall",
                                                    "hincrby",      "hget",
                                                    "hexists",      "hdel",
                                                    "zadd",         "zrangebyscore",
                                                    "zcount",       "zrange",
                                                    "zcard",        "zremrangebyscore",
                                                    "zscore",       "zrem",
                                                    "zrangebylex",  "zlexcount",
                                                    "sadd",         "smembers",
                                                    "smismember",   "sunion",
                                                    "srem",         "xadd",
                                                    "xlen",         "xrange",
                                                    "xrevrange",    "xgroup",
                                                    "xreadgroup",   "xpending",
                                                    "xclaim",       "xautoclaim",
                                                    "xack",         "xinfo",
                                                    "xinfo stream", "xgroup delconsumer",
                                                    "xtrim",        "xdel",
                                                    "del"};
  return commands;
}

std::vector<DoctorCheck> runDoctorChecks(const config::WorkerConfig& config, Clock& clock) {
  std::vector<DoctorCheck> checks;
  checks.push_back(
      {"runtime",
       Status::kOk,
       std::string(config::backendName(config.runtime.backend)) + " (RELAY_RUNTIME or --runtime)",
       {}});
  std::vector<const app::AppEntry*> networked;
  auto snapshot = loadTemplates(config.apps);
  if (!snapshot.ok()) {
    checks.push_back({"apps", Status::kFail, snapshot.error().message,
                      "set RELAY_APPS (or --apps) to a directory of apps (docs/apps.md)"});
  } else {
    std::size_t loaded = 0, invalid = 0;
    for (const app::AppEntry& entry : (*snapshot)->apps()) {
      if (!entry.errors.empty()) ++invalid;
      if (entry.app) {
        ++loaded;
        if (entry.app->network) networked.push_back(&entry);
      }
    }
    const std::string detail = std::to_string(loaded) + " loaded, " + std::to_string(invalid) +
                               " invalid under " + config.apps.string();
    if (invalid > 0) {
      checks.push_back(
          {"apps", Status::kWarn, detail, "relay validate --apps " + config.apps.string()});
    } else if (loaded == 0) {
      checks.push_back({"apps", Status::kWarn, detail + ": a worker without apps is not ready",
                        "add an app (docs/apps.md)"});
    } else {
      checks.push_back({"apps", Status::kOk, detail, {}});
    }
  }
  switch (config.runtime.backend) {
    case config::Backend::kSandbox:
      sandboxChecks(networked, config.runtime.sandbox_launcher, clock, checks);
      break;
    case config::Backend::kDocker: {
      const std::string& host = config.runtime.docker_host;
      const std::string prefix = "unix://";
      if (host.rfind(prefix, 0) != 0) {
        checks.push_back({"docker daemon", Status::kFail, "DOCKER_HOST=" + host + " is not unix://",
                          "set DOCKER_HOST=unix:///var/run/docker.sock"});
        break;
      }
      runtime::docker::DockerApi api(
          http::Client(http::UnixSocket{host.substr(prefix.size())}, clock),
          std::chrono::seconds(5));
      if (auto ping = api.ping(); ping.ok()) {
        checks.push_back({"docker daemon", Status::kOk, "answers on " + host, {}});
      } else {
        checks.push_back({"docker daemon", Status::kFail, host + ": " + ping.error().message,
                          "start dockerd, or point DOCKER_HOST at its socket (mount it into "
                          "Relay's container)"});
      }
      break;
    }
    case config::Backend::kProcess:
      checks.push_back({"isolation", Status::kWarn,
                        "RELAY_RUNTIME=process runs handlers without any",
                        "use RELAY_RUNTIME=sandbox outside development"});
      break;
  }
  redisChecks(config, checks);
  return checks;
}

}  // namespace relay::cli
