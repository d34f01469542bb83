#include "runtime/sandbox/sandbox_runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/duration.h"
#include "runtime/child_process.h"
#include "runtime/handler_command.h"
#include "runtime/handler_resolver.h"
#include "runtime/handover.h"
#include "runtime/output_lines.h"
#include "runtime/sandbox/cgroup_view.h"
#include "runtime/sandbox/host_diagnosis.h"
#include "runtime/sandbox/prewarmed_sandbox.h"
#include "runtime/sandbox/sandbox_probe.h"
#include "runtime/sandbox/start_gate.h"

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;

// The environment a cold start gives the handler, as KEY=VALUE.
std::vector<std::string> environmentOf(const InvocationSpec& spec) {
  std::vector<std::string> env;
  for (const auto& [key, value] : handlerEnvironment(spec)) env.push_back(key + "=" + value);
  return env;
}

// relay-launcher beside the running executable, or the configured one; empty when absent.
std::string findLauncher(const std::string& configured) {
  std::error_code ec;
  const fs::path path =
      configured.empty() ? fs::read_symlink("/proc/self/exe", ec).parent_path() / "relay-launcher"
                         : fs::path(configured);
  return !ec && ::access(path.c_str(), X_OK) == 0 ? path.string() : std::string();
}

// Whether the sandbox user can list and read `dir`: every ancestor searchable, the directory
// itself readable and searchable.
bool readableBy(const fs::path& dir, uid_t uid, gid_t gid) {
  fs::path current;
  struct stat info {};
  for (const fs::path& part : fs::absolute(dir)) {
    current /= part;
    if (::stat(current.c_str(), &info) != 0 || !modeGrants(info, uid, gid, 1)) return false;
  }
  return modeGrants(info, uid, gid, 4);  // `info` is the directory's own, stated last
}

}  // namespace

std::unique_ptr<SandboxRuntime> SandboxRuntime::create(Clock& clock, SandboxSettings settings) {
  const std::string base = settings.cgroup_base_name;
  // A container's read-only cgroups: Relay's own writable view, before anything reads them.
  auto view = enterWritableCgroupView();
  return create(clock, std::move(settings),
                detectCgroupLayout("/proc/self/mounts", "/proc/self/cgroup", base),
                view.ok() ? std::string() : view.error().message);
}

std::unique_ptr<SandboxRuntime> SandboxRuntime::create(Clock& clock, SandboxSettings settings,
                                                       Result<CgroupLayout> layout,
                                                       const std::string& cgroup_view_problem) {
  std::unique_ptr<SandboxRuntime> runtime(new SandboxRuntime(clock, std::move(settings)));
  const HostFacts facts = HostFacts::read();
  const auto bwrap = findExecutable("bwrap", runtime->settings_.search_path);
  if (!bwrap) {
    runtime->host_problem_ = "bubblewrap (bwrap) not found on " + runtime->settings_.search_path +
                             " (apt-get install bubblewrap)";
    return runtime;
  }
  runtime->tools_.bwrap = *bwrap;
  runtime->tools_.bwrap_disable_userns = bwrapSupports(*bwrap, "--disable-userns", clock);
  auto seccomp = SeccompFilter::build();
  if (!seccomp.ok()) {
    runtime->host_problem_ = seccomp.error().message;
    return runtime;
  }
  runtime->seccomp_ = std::move(*seccomp);
  if (!layout.ok()) {
    runtime->host_problem_ = layout.error().message;
    return runtime;
  }
  auto cgroups = CgroupManager::create(*layout, clock, runtime->settings_.cpu_slots);
  if (!cgroups.ok()) {
    runtime->host_problem_ = cgroups.error().message;
    if (!cgroup_view_problem.empty()) {
      runtime->host_problem_ =
          "the cgroup file system is mounted read-only and Relay cannot mount a writable view "
          "of its own cgroup: " +
          cgroup_view_problem + "; fix: " + fixForReadOnlyCgroups(cgroup_view_problem, facts);
    }
    return runtime;
  }
  runtime->cgroups_ = std::move(cgroups).value();
  // Every sandbox runs it first: it takes the hand-over and tells Relay the handler started.
  runtime->launcher_ = findLauncher(runtime->settings_.launcher);
  if (runtime->launcher_.empty()) {
    runtime->host_problem_ =
        "relay-launcher not found " +
        (runtime->settings_.launcher.empty() ? std::string("beside the relay executable")
                                             : "at " + runtime->settings_.launcher) +
        " (it is built and installed with relay: every sandbox runs it first)";
    return runtime;
  }
  if (auto probe = probeSandbox(runtime->settings_, runtime->tools_, *runtime->seccomp_, clock,
                                /*network=*/false, runtime->launcher_);
      !probe.ok()) {
    runtime->host_problem_ = probe.error().message;
    if (const std::string fix = fixForSandboxFailure(probe.error().message, facts); !fix.empty()) {
      runtime->host_problem_ += "; fix: " + fix;
    }
    return runtime;
  }
  runtime->network_problem_ = runtime->checkNetwork(clock);
  if (runtime->settings_.prewarm) {
    SandboxRuntime* self = runtime.get();
    runtime->prewarm_ = std::make_unique<PrewarmPool>(
        runtime->settings_.prewarm_settings, clock,
        [self](const InvocationSpec& spec) -> Result<std::unique_ptr<WarmSandbox>> {
          auto sandbox = self->startWarm(spec);
          if (!sandbox.ok()) return sandbox.error();
          self->cgroups_->prepare(spec.resources);
          return std::unique_ptr<WarmSandbox>(std::move(sandbox).value());
        });
    runtime->prewarm_->startWarmer();
  }
  return runtime;
}

std::string SandboxRuntime::checkNetwork(Clock& clock) {
  const auto pasta = findExecutable("pasta", settings_.search_path);
  if (!pasta) {
    return "pasta not found on " + settings_.search_path +
           ": it gives a network: true handler its own network namespace (apt-get install passt)";
  }
  tools_.pasta = *pasta;
  const auto unshare = findExecutable("unshare", settings_.search_path);
  if (!unshare) {
    return "unshare not found on " + settings_.search_path +
           ": it gives bwrap a /proc of pasta's pid namespace (apt-get install util-linux)";
  }
  tools_.unshare = *unshare;
  auto probe = probeSandbox(settings_, tools_, *seccomp_, clock, /*network=*/true, launcher_);
  if (probe.ok()) return {};
  // pasta's own message names no cause when the tun device is closed to the sandbox user.
  const std::string tun = tunAccessProblem("/dev/net/tun", settings_.uid, settings_.gid);
  if (!tun.empty()) return probe.error().message + "; " + tun;
  const std::string fix = fixForSandboxFailure(probe.error().message, HostFacts::read());
  return probe.error().message + (fix.empty() ? "" : "; fix: " + fix);
}

void SandboxRuntime::forget(const std::string& app) {
  if (prewarm_) prewarm_->forget(app);
}

Availability SandboxRuntime::availability(const InvocationSpec& app_spec) const {
  if (!host_problem_.empty()) return {false, "sandbox unavailable: " + host_problem_};
  if (app_spec.network && !network_problem_.empty()) {
    return {false, "network: true unavailable: " + network_problem_};
  }
  std::error_code ec;
  if (!fs::is_directory(app_spec.app_dir, ec)) {
    return {false, "app directory " + app_spec.app_dir.string() + " does not exist"};
  }
  if (!readableBy(app_spec.app_dir, settings_.uid, settings_.gid)) {
    return {false, "app directory " + app_spec.app_dir.string() +
                       " is not readable by the sandbox user (uid " +
                       std::to_string(settings_.uid) + "): make it and its parents world-readable"};
  }
  if (auto file = resolveHandler(app_spec.language, app_spec.app_dir, app_spec.handler); !file.ok())
    return {false, file.error().message};
  if (app_spec.language != Language::kExec) {
    const char* interpreter = languageName(app_spec.language);
    if (!findExecutable(interpreter, "/usr/local/bin:/usr/bin")) {
      return {false, std::string(interpreter) + " is not installed under /usr"};
    }
  }
  return {};
}

Result<std::unique_ptr<ChildProcess>> SandboxRuntime::launch(const InvocationSpec& spec,
                                                             const InvocationCgroup& cgroup,
                                                             const std::vector<std::string>& extra,
                                                             std::vector<std::string> command,
                                                             std::vector<std::string> env,
                                                             int status_fd) const {
  auto seccomp = seccomp_->openProgram();
  if (!seccomp.ok()) return seccomp.error();
  LaunchOptions options;
  options.argv = sandboxArgv(settings_, tools_, spec, extra, std::move(command));
  options.executable = options.argv.front();
  options.inherited_fds = {seccomp->get(), status_fd};  // become kSeccompFd and kStatusFd
  options.env = std::move(env);
  options.cgroup_procs_files = cgroup.procsFiles();
  options.cgroup_fd = cgroup.directoryFd();
  options.uid = settings_.uid;
  options.gid = settings_.gid;
  options.cwd = "/";
  // Under no_new_privs pasta's exec of bwrap would not regain the capabilities bwrap needs in
  // pasta's user namespace; bwrap sets no_new_privs for the handler either way.
  options.no_new_privs = !spec.network;
  return ChildProcess::spawn(options);
}

Result<std::unique_ptr<PrewarmedSandbox>> SandboxRuntime::startWarm(const InvocationSpec& spec) {
  auto cgroup = cgroups_->createInvocation(spec.resources);
  if (!cgroup.ok()) return cgroup.error();
  int status[2];
  if (::pipe2(status, O_CLOEXEC) != 0) {
    return Error::unavailable(std::string("pipe2: ") + std::strerror(errno));
  }
  UniqueFd status_read(status[0]);
  const UniqueFd status_write(status[1]);  // the sandbox's copy only, once bwrap has it
  // Nothing of any invocation: the handler's environment arrives with the hand-over. An
  // interpreter starts with the app's env too, which it reads at start-up (PYTHONPATH...).
  InvocationSpec bare = spec;
  if (spec.language == Language::kExec) bare.app_env.clear();
  std::vector<std::string> env;
  for (const std::string& var : environmentOf(bare)) {
    if (var.rfind("RELAY_", 0) != 0) env.push_back(var);
  }
  std::vector<std::string> extra;
  if (spec.language == Language::kExec) extra = {"--ro-bind", launcher_, kLauncherMount};
  auto bwrap = launch(spec, **cgroup, extra, warmHandlerCommand(spec.language, kLauncherMount),
                      std::move(env), status_write.get());
  if (!bwrap.ok()) return bwrap.error();
  return std::make_unique<PrewarmedSandbox>(std::move(cgroup).value(), std::move(bwrap).value(),
                                            std::move(status_read));
}

Result<Outcome> SandboxRuntime::run(const InvocationSpec& spec, OutputSink& output) {
  const Availability available = availability(spec);
  if (!available.available) return Error::unavailable(available.reason);
  if (std::unique_ptr<WarmSandbox> warm = prewarm_ ? prewarm_->take(spec) : nullptr) {
    ++prewarmed_runs_;
    return supervise(spec, static_cast<PrewarmedSandbox&>(*warm), output);
  }
  // Cold: the same sandbox, started for this invocation and handed it at once.
  auto sandbox = startWarm(spec);
  if (!sandbox.ok()) return sandbox.error();
  auto outcome = supervise(spec, **sandbox, output);
  // The next invocation with these limits finds its cgroup made (this one is never reused).
  cgroups_->prepare(spec.resources);
  return outcome;
}

Result<Outcome> SandboxRuntime::supervise(const InvocationSpec& spec, PrewarmedSandbox& sandbox,
                                          OutputSink& output) {
  // The hand-over is what a cold start of the handler would exec: its argv, its environment.
  std::string input = encodeHandover({handlerCommand(spec, kAppMount), environmentOf(spec)});
  input.append(spec.input);
  InvocationCgroup& group = sandbox.cgroup();
  ChildProcess& process = sandbox.bwrap();
  const MonoTime start = clock_.monotonicNow();
  const std::string prefix = outputPrefix(spec);
  // Until the sandbox's first program reports `started`, what it prints is the sandbox's.
  StartGate gate(output, prefix);
  LineSplitter out(prefix, gate);
  LineSplitter err(prefix, gate);
  const ChildProcess::SideChannel status{sandbox.status(),
                                         [&gate](std::string_view bytes) { gate.status(bytes); }};
  // The cgroup holds bwrap (under pasta with network) and everything below it, whatever
  // sessions the handler creates. SIGTERM spares the process Relay started and its direct
  // children (bwrap and its namespace init, or pasta and bwrap; an init ignores SIGTERM
  // anyway), so the handler gets its grace period instead of losing its whole pid namespace at
  // once; SIGKILL takes everything.
  const pid_t root_pid = process.pid();
  // The handler's start is the first program's `started` report (StartGate calls
  // output.started()), not bwrap's: bwrap can still fail to build the sandbox.
  auto termination = process.supervise(
      input, out, err, clock_, spec.timeout,
      [&group, root_pid](int sig) { group.signalAll(sig, sig == SIGKILL ? -1 : root_pid); },
      &status);
  if (!gate.opened()) {
    // The handler never ran: bwrap or pasta failed to set the sandbox up, or the first program
    // refused the hand-over. Not the handler's attempt (docs/runtimes.md "Set-up failures").
    std::string why = gate.failure();
    if (!termination.ok()) {
      why = termination.error().message;
    } else if (termination->timed_out) {
      why = "the sandbox did not start within " + formatDuration(spec.timeout) +
            (why.empty() ? "" : " (" + why + ")");
    } else if (why.empty()) {
      why = termination->exited ? "exit " + std::to_string(termination->code)
                                : "signal " + std::to_string(termination->signal);
      why += " before the handler started";
    }
    return Error::unavailable("sandbox set-up failed: " + why);
  }
  if (!termination.ok()) {
    Outcome lost;
    lost.reason = "lost the handler: " + termination.error().message;
    lost.duration = clock_.monotonicNow() - start;
    return lost;
  }
  // bwrap reports a handler killed by signal N as exit 128+N.
  if (termination->exited && termination->code > 128 && termination->code < 128 + NSIG) {
    termination->exited = false;
    termination->signal = termination->code - 128;
  }
  Outcome outcome = outcomeOf(*termination, spec.timeout, clock_.monotonicNow() - start);
  if (!outcome.succeeded && !termination->timed_out && group.oomKilled()) {
    outcome.reason +=
        " (out of memory: limit " + std::to_string(spec.resources.memory_bytes) + " bytes)";
  }
  return outcome;
}

}  // namespace relay::runtime
