#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "runtime/cancel_signal.h"
#include "runtime/egress_policy.h"

namespace relay::runtime {

/// How a handler name resolves to code: the template's `runtime:` key (docs/apps.md "Handlers
/// by runtime").
enum class Language { kExec, kPython3, kNode };

/// Why an invocation runs; becomes RELAY_TRIGGER.
enum class Trigger { kEvent, kSchedule, kManual, kReplay };

/// `exec`, `python3` or `node`.
const char* languageName(Language language);
/// The inverse of languageName(); nullopt for anything else.
std::optional<Language> languageFromName(std::string_view name);
/// The container image the docker runtime uses when the app names none.
std::string_view defaultImage(Language language);
const char* triggerName(Trigger trigger);

/// Per-invocation limits (docs/apps.md "resources").
struct Resources {
  std::uint64_t memory_bytes = 256ULL << 20;
  double cpus = 1.0;
  std::uint32_t pids = 128;
};

/// Everything a backend needs to run one invocation; it knows nothing of apps or streams.
struct InvocationSpec {
  std::string app;                // app name, for the output prefix and RELAY_APP
  std::filesystem::path app_dir;  // mounted read-only at /app
  Language language = Language::kExec;
  std::string handler;  // `bin/run.sh` (exec) or `a.b.fn` (python3, node)
  /// The app's `image` (docs/apps.md): docker's container image (empty: its default for the
  /// language); on the sandbox, when set, the root file system (docs/runtimes.md "Image roots").
  std::string image;
  bool network = false;
  /// With network: the app's `egress` list; non-empty: only these destinations (sandbox).
  std::vector<EgressAllow> egress;
  Resources resources;
  std::chrono::milliseconds timeout{30'000};
  std::vector<std::pair<std::string, std::string>> app_env;  // the app's `env`
  std::string message_id;                                    // RELAY_MESSAGE_ID
  int attempt = 1;  // RELAY_ATTEMPT, 1-based real execution count
  Trigger trigger = Trigger::kEvent;
  std::string_view input;  // stdin bytes, passed verbatim, then EOF
  /// When requested, the handler is stopped at once like a timeout and the outcome says
  /// `cancelled` (docs/pipeline.md "Cancellation"); may be null. Must outlive run().
  const CancelSignal* cancel = nullptr;

  /// `<message-id>/<app>/<handler>`: stable across retries, the idempotency key.
  std::string invocationId() const { return message_id + "/" + app + "/" + handler; }
};

/// How one invocation ended. `reason` is empty on success, otherwise `exit 3`, `signal 9`,
/// `timeout 20s`.
struct Outcome {
  bool succeeded = false;
  std::string reason;
  std::chrono::nanoseconds duration{0};
  /// The handler's exit status when it exited by itself (not a signal, not the timeout): the
  /// lifecycle reads 75 as a retry-after request (docs/runtimes.md "Retry-after").
  std::optional<int> exit_code{};
  bool cancelled = false;  // stopped by InvocationSpec::cancel (reason `cancelled`)
};

/// Receives the handler's output, one complete line at a time (without the newline), already
/// prefixed `[<app>/<handler>] `. Called from the thread that runs the invocation.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  virtual void line(std::string_view prefixed_line) = 0;
  /// The handler has really started (docs/runtimes.md "Starting a handler"): called once per
  /// run, by the thread that runs it, before any line, and never when run() returns an Error
  /// (the handler never started). The lifecycle charges the attempt from here on.
  virtual void started() {}
};

/// Whether a backend can run an app now; the reason feeds `relay app ls`.
struct Availability {
  Availability() = default;
  Availability(bool is_available, std::string why, std::string digest = {})
      : available(is_available), reason(std::move(why)), image_digest(std::move(digest)) {}

  bool available = true;
  std::string reason;
  /// The digest (`sha256:` image ID) of the image the app's handlers run on, when the backend
  /// runs it on one (docker; sandbox with an `image`); shown by `relay app inspect`.
  std::string image_digest;
};

/// Runs one handler invocation to completion in some isolation backend.
class Runtime {
 public:
  virtual ~Runtime() = default;
  /// Backend name: `sandbox`, `docker` or `process`.
  virtual std::string_view name() const = 0;
  /// Blocks until the handler exits or spec.timeout passes (then SIGTERM, SIGKILL 2 s later,
  /// the whole process tree). The contract every backend keeps (docs/runtimes.md): an Error
  /// means the handler never started (kUnavailable: bwrap missing, daemon down, image missing,
  /// a container that could not be created or started) and the attempt is not charged; once
  /// the handler has started, every ending is an Outcome, charged: a failure Relay caused or
  /// could not observe after the start (output stream lost, wait failed, the daemon went away
  /// mid-run, a container that would not die) is a failed Outcome whose reason says so, never
  /// an Error. Thread-safe: many invocations may run at once.
  virtual Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) = 0;
  /// Whether this backend can run handlers of this app (image present, bwrap works...).
  virtual Availability availability(const InvocationSpec& app_spec) const = 0;
  /// The app's template or files changed (or it was removed): drop anything prepared for it
  /// ahead of demand. Thread-safe.
  virtual void forget(const std::string& /*app*/) {}
  /// Removes what a crashed Relay on this host left behind (docker: its labelled containers)
  /// and returns how many. Called explicitly where a worker starts, never by commands that
  /// only look (`relay app ls`); the default has nothing to remove. Blocks on the backend.
  virtual Result<std::size_t> reapStale() { return std::size_t{0}; }
};

/// The environment every handler gets: the app's env, then Relay's own RELAY_* variables
/// (which win), plus PATH/HOME/LANG defaults suitable for the runtime.
std::vector<std::pair<std::string, std::string>> handlerEnvironment(const InvocationSpec& spec);

}  // namespace relay::runtime
