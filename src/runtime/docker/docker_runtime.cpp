#include "runtime/docker/docker_runtime.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <optional>

#include "runtime/child_process.h"
#include "runtime/docker/attach_stream.h"
#include "runtime/docker/prewarmed_container.h"
#include "runtime/handler_command.h"
#include "runtime/handler_resolver.h"
#include "runtime/handover.h"
#include "runtime/output_lines.h"

namespace relay::runtime::docker {
namespace {

// Values shorter than this are too common to be worth hiding (and would mangle messages).
constexpr std::size_t kMinScrubbedLength = 4;
constexpr int kMaxSignal = 64;

std::string imageMissing(const std::string& image) {
  return "image " + image + " not present (no registry is reached; load it with docker load)";
}

// The daemon may quote parts of the create body (an env entry it rejects) in its error: keep
// the app's env values, which may be secrets, out of messages that end up in logs.
std::string scrubSecrets(std::string message, const InvocationSpec& spec) {
  for (const auto& [key, value] : spec.app_env) {
    if (value.size() < kMinScrubbedLength) continue;
    for (std::size_t at = message.find(value); at != std::string::npos;
         at = message.find(value, at + 3)) {
      message.replace(at, value.size(), "***");
    }
  }
  return message;
}

std::string localHostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// What can be checked without the daemon: the bind source and the handler file. The
// container runs as the app's own uid, which owns nothing of the host: the bind-mounted
// directory must be open to others.
Status checkAppFiles(const InvocationSpec& spec) {
  struct stat info {};
  if (::stat(spec.app_dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Error::notFound("app directory " + spec.app_dir.string() + " does not exist");
  }
  if ((info.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH)) {
    return Error::invalid("app directory " + spec.app_dir.string() +
                          " is not readable by the container user (the app's own uid, "
                          "docs/runtimes.md \"Identities\"): make it world-readable (chmod o+rx)");
  }
  auto file = resolveHandler(spec.language, spec.app_dir, spec.handler);
  if (!file) return file.error();
  if (!spec.egress.empty()) {
    // Never run with a wider network than the template asks for (docs/apps.md "egress").
    return Error::unavailable(
        "the app has an egress list, which only the sandbox runtime enforces "
        "(RELAY_RUNTIME=sandbox)");
  }
  return {};
}

// Runs `action` when the scope ends, however it ends (an exception from an OutputSink too).
template <typename Action>
struct AtScopeEnd {
  Action action;
  ~AtScopeEnd() { action(); }
};
template <typename Action>
AtScopeEnd(Action) -> AtScopeEnd<Action>;

// Docker reports a process killed by signal N as exit code 128 + N (a handler that exits
// with such a code on purpose looks the same).
ChildProcess::Termination terminationOf(int exit_code, bool timed_out) {
  ChildProcess::Termination termination;
  termination.timed_out = timed_out;
  if (exit_code > 128 && exit_code <= 128 + kMaxSignal) {
    termination.signal = exit_code - 128;
  } else {
    termination.exited = true;
    termination.code = exit_code;
  }
  return termination;
}

}  // namespace

Result<std::unique_ptr<DockerRuntime>> DockerRuntime::create(Clock& clock,
                                                             DockerSettings settings) {
  auto socket_path = socketPathFromDockerHost(settings.docker_host);
  if (!socket_path) return socket_path.error();
  if (!settings.warn) {
    settings.warn = [](std::string_view message) {
      std::fprintf(stderr, "relay: docker runtime: %.*s\n", static_cast<int>(message.size()),
                   message.data());
    };
  }
  const auto started =
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock.now().time_since_epoch());
  std::string hostname = localHostname();
  std::string owner =
      hostname + "/" + std::to_string(::getpid()) + "/" + std::to_string(started.count());
  DockerApi api(http::Client(http::UnixSocket{std::move(*socket_path)}, clock,
                             "docker daemon at " + settings.docker_host),
                settings.api_timeout);
  std::unique_ptr<DockerRuntime> runtime(new DockerRuntime(
      clock, std::move(settings), std::move(api), std::move(owner), std::move(hostname)));
  if (runtime->settings_.prewarm) {
    runtime->launcher_ = findLauncher(runtime->settings_.launcher);
    if (!runtime->launcher_.empty()) {
      DockerRuntime* self = runtime.get();
      runtime->prewarm_ = std::make_unique<PrewarmPool>(
          runtime->settings_.prewarm_settings, clock,
          [self](const InvocationSpec& spec) { return self->startWarm(spec); });
      runtime->prewarm_->startWarmer();
    }
  }
  return runtime;
}

void DockerRuntime::forget(const std::string& app) {
  if (prewarm_) prewarm_->forget(app);
}

std::string DockerRuntime::containerName(const InvocationSpec& spec) {
  return invocationNamePrefix(spec.invocationId()) + std::to_string(::getpid()) + "-" +
         std::to_string(++names_);
}

DockerRuntime::DockerRuntime(Clock& clock, DockerSettings settings, DockerApi api,
                             std::string owner, std::string hostname)
    : clock_(clock),
      settings_(std::move(settings)),
      api_(std::move(api)),
      owner_(std::move(owner)),
      reaper_(api_, clock_, owner_, std::move(hostname), settings_.warn) {}

Availability DockerRuntime::availability(const InvocationSpec& app_spec) const {
  if (auto files = checkAppFiles(app_spec); !files) return {false, files.error().message};
  // Every ping error names the daemon (docker_api.cpp).
  if (auto ping = api_.ping(); !ping) return {false, ping.error().message};
  const std::string& image = imageFor(app_spec, settings_.default_images);
  if (image.rfind("oci:", 0) == 0) {
    return {false,
            "image " + image +
                ": OCI layout directories run under the sandbox runtime only (docs/runtimes.md "
                "\"Image roots\"); docker runs the daemon's images"};
  }
  auto id = api_.imageId(image);
  if (!id) return {false, id.error().message};
  if (!*id) return {false, imageMissing(image)};
  return {true, {}, **id};
}

Result<Outcome> DockerRuntime::run(const InvocationSpec& spec, OutputSink& output) {
  if (auto files = checkAppFiles(spec); !files) return Error::unavailable(files.error().message);
  // An earlier attempt that a crashed Relay left running must not overlap this one.
  if (auto earlier = reaper_.reapInvocation(spec.invocationId()); !earlier) {
    return Error::unavailable(earlier.error().message);
  }
  reaper_.reapExpiredEvery(settings_.reap_interval);
  // An app whose env an interpreter reads only at start-up is never prewarmed (prewarmable()).
  if (std::unique_ptr<WarmSandbox> warm =
          prewarm_ && prewarmable(spec) ? prewarm_->take(spec) : nullptr) {
    auto& container = static_cast<PrewarmedContainer&>(*warm);
    // Named for its invocation before it learns it, so that a retry elsewhere finds it (its
    // labels were fixed when it was made); one that cannot be renamed is dropped unused.
    if (auto renamed = api_.rename(container.id(), containerName(spec)); renamed) {
      ++prewarmed_runs_;
      const std::string id = container.id();
      http::HijackedConnection connection = container.handOver();
      warm.reset();
      const AtScopeEnd remove{[this, &id] { removeContainer(id); }};
      // Exactly what a cold start would run, then the event; the timeout counts from here.
      const std::string input = handoverInput(spec, "/app");
      return watch(id, spec, output, std::move(connection), input, /*running=*/true);
    } else {
      settings_.warn("a prewarmed container could not be named for " + spec.invocationId() + ": " +
                     renamed.error().message + " (starting a new one)");
    }
  }
  auto id = createContainer(spec);
  if (!id) return id.error();
  // Removal runs on every path out, including an exception from the OutputSink.
  const AtScopeEnd remove{[this, &id] { removeContainer(*id); }};
  return supervise(*id, spec, output);
}

Result<std::unique_ptr<WarmSandbox>> DockerRuntime::startWarm(const InvocationSpec& spec) {
  if (auto files = checkAppFiles(spec); !files) return files.error();
  ContainerOptions options;
  options.image = imageFor(spec, settings_.default_images);
  // It waits at most max_age, then serves one invocation of at most max_timeout.
  const auto lifetime = settings_.prewarm_settings.max_age + settings_.max_timeout +
                        settings_.kill_grace + settings_.api_timeout + settings_.deadline_margin;
  options.labels = {{std::string(kAppLabel), spec.app},
                    {std::string(kOwnerLabel), owner_},
                    {std::string(kDeadlineLabel), deadlineLabel(clock_.now() + lifetime)},
                    {std::string(kPrewarmedLabel), "true"}};
  options.tmpfs_options = settings_.tmpfs_options;
  options.init = settings_.init;
  // Nothing of any invocation: its command and environment arrive with the hand-over.
  options.command = warmHandlerCommand(spec.language, kLauncherMount);
  options.env = warmEnvironment(spec, /*app_env=*/false);
  options.user = identities_.of(spec.app);
  if (spec.language == Language::kExec) options.launcher = launcher_;
  auto id = api_.createContainer(containerCreateBody(spec, options));
  if (!id) return Error{id.error().kind, scrubSecrets(id.error().message, spec)};
  auto connection = api_.attach(*id);
  if (!connection) {
    removeContainer(*id);
    return connection.error();
  }
  if (auto started = api_.start(*id); !started) {
    removeContainer(*id);
    return started.error();
  }
  return std::unique_ptr<WarmSandbox>(
      std::make_unique<PrewarmedContainer>(api_, settings_.warn, *id, std::move(*connection)));
}

Result<std::string> DockerRuntime::createContainer(const InvocationSpec& spec) {
  ContainerOptions options;
  options.image = imageFor(spec, settings_.default_images);
  const auto lifetime =
      spec.timeout + settings_.kill_grace + settings_.api_timeout + settings_.deadline_margin;
  options.labels = {{std::string(kAppLabel), spec.app},
                    {std::string(kInvocationLabel), spec.invocationId()},
                    {std::string(kOwnerLabel), owner_},
                    {std::string(kDeadlineLabel), deadlineLabel(clock_.now() + lifetime)}};
  options.tmpfs_options = settings_.tmpfs_options;
  options.init = settings_.init;
  options.user = identities_.of(spec.app);
  auto id = api_.createContainer(containerCreateBody(spec, options), containerName(spec));
  if (id) return id;
  Error error = id.error();
  if (error.kind == ErrorKind::kNotFound) {
    // 404 on create means a missing image; confirm rather than trust the message text.
    auto exists = api_.imageExists(options.image);
    if (exists && !*exists) return Error::unavailable(imageMissing(options.image));
    error.kind = ErrorKind::kUnavailable;
  }
  error.message = scrubSecrets(std::move(error.message), spec);
  return error;
}

Result<Outcome> DockerRuntime::supervise(const std::string& id, const InvocationSpec& spec,
                                         OutputSink& output) {
  auto connection = api_.attach(id);
  if (!connection) return connection.error();
  return watch(id, spec, output, std::move(*connection), spec.input, /*running=*/false);
}

Result<Outcome> DockerRuntime::watch(const std::string& id, const InvocationSpec& spec,
                                     OutputSink& output, http::HijackedConnection connection,
                                     std::string_view input, bool running) {
  LineSplitter out(outputPrefix(spec), output);
  LineSplitter err(outputPrefix(spec), output);
  AttachStream stream(std::move(connection), input,
                      [&out, &err](StreamKind kind, std::string_view bytes) {
                        if (kind == StreamKind::kStdout) out.feed(bytes);
                        if (kind == StreamKind::kStderr) err.feed(bytes);
                      });

  const MonoTime started = clock_.monotonicNow();
  if (auto status = running ? Status{} : api_.start(id); !status) {
    // A lost reply may hide a container that did start: then it is a charged attempt.
    auto state = api_.inspect(id);
    if (!state || !state->started) return status.error();
    output.started();
    return failedAfterStart(id, status.error().message, started);
  }
  output.started();  // the container runs the handler from here (docs/runtimes.md)

  // Wait for the end of the output, then for the exit; at each passed deadline escalate:
  // SIGTERM, SIGKILL after the grace period, then give up.
  enum class Phase { kRunning, kTerminating, kKilled } phase = Phase::kRunning;
  MonoTime deadline = started + spec.timeout;
  bool stream_open = true;
  bool cancelled = false;
  int exit_code = 0;
  // A cancel (docs/pipeline.md "Cancellation") is looked at every 100 ms while the handler runs
  // and escalates like a timeout from then on.
  const auto wait_until = [&] {
    if (phase != Phase::kRunning || spec.cancel == nullptr) return deadline;
    return std::min(deadline, clock_.monotonicNow() + std::chrono::milliseconds(100));
  };
  while (true) {
    const MonoTime until = wait_until();
    if (stream_open) {
      auto ended = stream.pump(clock_, until);
      if (!ended) {
        out.finish();
        err.finish();
        return failedAfterStart(id, ended.error().message, started);
      }
      if (*ended) {
        stream_open = false;
        continue;
      }
    } else {
      auto code = api_.wait(id, until);
      if (code) {
        exit_code = *code;
        break;
      }
      if (code.error().kind != ErrorKind::kTimeout) {
        out.finish();
        err.finish();
        return failedAfterStart(id, code.error().message, started);
      }
    }
    if (phase == Phase::kRunning && clock_.monotonicNow() < deadline) {
      if (spec.cancel == nullptr || !spec.cancel->requested()) continue;
      cancelled = true;
    }
    switch (phase) {
      case Phase::kRunning:
        phase = Phase::kTerminating;
        deadline = clock_.monotonicNow() + settings_.kill_grace;
        if (auto status = api_.kill(id, "TERM"); !status) settings_.warn(status.error().message);
        break;
      case Phase::kTerminating:
        phase = Phase::kKilled;
        deadline = clock_.monotonicNow() + settings_.api_timeout;
        if (auto status = api_.kill(id, "KILL"); !status) settings_.warn(status.error().message);
        break;
      case Phase::kKilled:
        out.finish();
        err.finish();
        return failedAfterStart(id, "docker: container " + id + " did not exit after SIGKILL",
                                started);
    }
  }
  const auto duration = clock_.monotonicNow() - started;
  out.finish();
  err.finish();

  const bool timed_out = phase != Phase::kRunning && !cancelled;
  bool oom_killed = false;
  if (auto state = api_.inspect(id); state) {
    oom_killed = state->oom_killed;
  } else {
    settings_.warn("could not tell whether " + spec.invocationId() +
                   " ran out of memory: " + state.error().message);
  }
  ChildProcess::Termination termination = terminationOf(exit_code, timed_out);
  termination.cancelled = cancelled;
  Outcome outcome = outcomeOf(termination, spec.timeout,
                              std::chrono::duration_cast<std::chrono::nanoseconds>(duration));
  if (oom_killed && !outcome.succeeded) outcome.reason += " (out of memory)";
  return outcome;
}

Outcome DockerRuntime::failedAfterStart(const std::string& id, const std::string& why,
                                        MonoTime started) {
  if (auto status = api_.kill(id, "KILL"); !status) settings_.warn(status.error().message);
  Outcome outcome;
  outcome.reason = "lost the handler's container: " + why;
  outcome.duration = clock_.monotonicNow() - started;
  return outcome;
}

void DockerRuntime::removeContainer(const std::string& id) {
  if (auto status = api_.remove(id); !status) {
    settings_.warn("could not remove container " + id + ": " + status.error().message +
                   " (the next start reaps it)");
  }
}

}  // namespace relay::runtime::docker
