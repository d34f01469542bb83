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
#include "runtime/docker/container_config.h"
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

// What a network: true sandbox of `spec` may reach (docs/runtimes.md "network: true"):
// never link-local or the host's own addresses (read now: they change), and with an egress
// list only what it names.
EgressPolicy egressPolicyFor(const InvocationSpec& spec) {
  EgressPolicy policy;
  policy.denied = linkLocalBlocks();
  for (Cidr& own : hostAddresses()) policy.denied.push_back(std::move(own));
  policy.allow_list = !spec.egress.empty();
  policy.allowed = spec.egress;
  return policy;
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
  runtime->tools_.launcher = runtime->launcher_;  // it also installs the egress filter
  if (auto probe = probeSandbox(runtime->settings_, runtime->tools_, *runtime->seccomp_, clock,
                                /*network=*/false, runtime->launcher_);
      !probe.ok()) {
    runtime->host_problem_ = probe.error().message;
    if (const std::string fix = fixForSandboxFailure(probe.error().message, facts); !fix.empty()) {
      runtime->host_problem_ += "; fix: " + fix;
    }
    return runtime;
  }
  runtime->chooseLauncher(clock);
  if (!runtime->host_problem_.empty()) return runtime;
  runtime->network_problem_ = runtime->checkNetwork(clock);
  if (runtime->settings_.prewarm) {
    SandboxRuntime* self = runtime.get();
    runtime->prewarm_ = std::make_unique<PrewarmPool>(
        runtime->settings_.prewarm_settings, clock,
        [self](const InvocationSpec& spec) -> Result<std::unique_ptr<WarmSandbox>> {
          // Its own hold on the image root: the root stays unevictable while the sandbox waits.
          auto root = self->check(spec);
          if (!root.ok()) return root.error();
          auto sandbox = self->startWarm(spec, std::move(root).value(), /*app_env=*/false);
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
  InvocationSpec probe_spec;
  auto probe = probeSandbox(settings_, tools_, *seccomp_, clock, /*network=*/true, launcher_,
                            egressPolicyFor(probe_spec));
  if (probe.ok()) return {};
  // pasta's own message names no cause when the tun device is closed to the sandbox user.
  const std::string tun =
      tunAccessProblem("/dev/net/tun", settings_.ids.first, settings_.ids.first);
  if (!tun.empty()) return probe.error().message + "; " + tun;
  const std::string fix = fixForSandboxFailure(probe.error().message, HostFacts::read());
  return probe.error().message + (fix.empty() ? "" : "; fix: " + fix);
}

void SandboxRuntime::chooseLauncher(Clock& clock) {
  const bool forced = settings_.sandbox_launcher == SandboxLauncher::kNative;
  const auto fallBack = [this, forced](const std::string& why) {
    if (forced) {
      host_problem_ = "the native launcher was asked for (RELAY_SANDBOX_LAUNCHER=native) but " +
                      why + "; fix: RELAY_SANDBOX_LAUNCHER=bwrap or auto";
    } else {
      launcher_choice_ = "bwrap (" + why + ")";
    }
  };
  if (settings_.sandbox_launcher == SandboxLauncher::kBwrap) {
    launcher_choice_ = "bwrap (RELAY_SANDBOX_LAUNCHER=bwrap)";
    return;
  }
  // It creates the namespaces and mounts as root, then drops to the app's uid.
  if (::geteuid() != 0)
    return fallBack(
        "Relay does not run as root, which the native launcher "
        "needs to build namespaces and mounts");
  auto tree = NativeTemplate::create(settings_, launcher_);
  if (!tree.ok()) return fallBack(tree.error().message);
  if (auto probe = probeNative(settings_, launcher_, **tree, *seccomp_, clock); !probe.ok()) {
    return fallBack(probe.error().message);
  }
  native_ = std::move(tree).value();
  launcher_choice_ = "native (its self-test passed; bwrap for network: true and image apps)";
}

void SandboxRuntime::forget(const std::string& app) {
  if (prewarm_) prewarm_->forget(app);
}

Result<image::ImageCache*> SandboxRuntime::images() const {
  std::lock_guard lock(images_mutex_);
  if (images_) return images_.get();
  if (!daemon_) {
    // Images by name come from the daemon's export; without a usable DOCKER_HOST only `oci:`
    // layouts can be unpacked.
    if (auto socket = docker::socketPathFromDockerHost(settings_.docker_host); socket.ok()) {
      daemon_ = std::make_unique<docker::DockerApi>(
          http::Client(http::UnixSocket{*socket}, clock_,
                       "docker daemon at " + settings_.docker_host),
          std::chrono::seconds(60));
    }
  }
  auto cache = image::ImageCache::create(settings_.image_cache, clock_, daemon_.get());
  if (!cache.ok()) return cache.error();
  images_ = std::move(cache).value();
  return images_.get();
}

Result<std::shared_ptr<const image::ImageRoot>> SandboxRuntime::check(
    const InvocationSpec& spec) const {
  if (!host_problem_.empty()) return Error::unavailable("sandbox unavailable: " + host_problem_);
  if (spec.network && !network_problem_.empty()) {
    return Error::unavailable("network: true unavailable: " + network_problem_);
  }
  std::error_code ec;
  if (!fs::is_directory(spec.app_dir, ec)) {
    return Error::unavailable("app directory " + spec.app_dir.string() + " does not exist");
  }
  const uid_t id = identities_.of(spec.app);
  const auto unreadable = [id](const fs::path& dir, const std::string& what) {
    return Error::unavailable(what + " " + dir.string() +
                              " is not readable by the app's sandbox user (uid " +
                              std::to_string(id) + "): make it and its parents world-readable");
  };
  if (!readableBy(spec.app_dir, id, id)) {
    return unreadable(spec.app_dir, "app directory");
  }
  if (auto file = resolveHandler(spec.language, spec.app_dir, spec.handler); !file.ok()) {
    return Error::unavailable(file.error().message);
  }
  const char* interpreter = languageName(spec.language);
  if (spec.image.empty()) {
    if (spec.language != Language::kExec &&
        !findExecutable(interpreter, "/usr/local/bin:/usr/bin")) {
      return Error::unavailable(std::string(interpreter) + " is not installed under /usr");
    }
    return std::shared_ptr<const image::ImageRoot>();
  }
  // The app's own root file system (docs/runtimes.md "Image roots").
  auto cache = images();
  if (!cache.ok()) return Error::unavailable(cache.error().message);
  auto root = (*cache)->acquire(spec.image);
  if (!root.ok()) return root.error();
  if (!readableBy((*root)->rootfs(), id, id)) {
    return unreadable((*root)->rootfs(), "image root");
  }
  if (spec.language != Language::kExec &&
      !(*root)->hasExecutable(interpreter, "/usr/local/bin:/usr/bin:/bin")) {
    return Error::unavailable("image " + spec.image + " has no " + interpreter +
                              " in /usr/local/bin, /usr/bin or /bin: a " + interpreter +
                              " app's image must bring its interpreter");
  }
  return root;
}

Availability SandboxRuntime::availability(const InvocationSpec& app_spec) const {
  auto root = check(app_spec);
  if (!root.ok()) return {false, root.error().message, {}};
  return {true, {}, *root ? (*root)->digest() : std::string()};
}

Result<std::unique_ptr<ChildProcess>> SandboxRuntime::launch(
    const InvocationSpec& spec, const InvocationCgroup& cgroup,
    const std::vector<std::string>& extra, std::vector<std::string> command,
    std::vector<std::string> env, int status_fd, const image::ImageRoot* image) const {
  auto seccomp = seccomp_->openProgram();
  if (!seccomp.ok()) return seccomp.error();
  LaunchOptions options;
  const uid_t id = identities_.of(spec.app);
  if (native_ && image == nullptr && nativeBuilds(spec)) {
    // relay-launcher builds it as root and drops to `id` itself (docs/runtimes.md "Native
    // launcher"); the launcher it would bind is in the prepared tree already.
    options.argv = nativeArgv(settings_, launcher_, spec, id, std::move(command));
    options.executable = launcher_;
    options.inherited_fds = {seccomp->get(), status_fd, native_->fd()};
    options.env = std::move(env);
    options.cgroup_procs_files = cgroup.procsFiles();
    options.cgroup_fd = cgroup.directoryFd();
    options.cwd = "/";
    return ChildProcess::spawn(options);
  }
  options.argv = sandboxArgv(settings_, tools_, spec, id, extra, std::move(command),
                             spec.network ? egressPolicyFor(spec) : EgressPolicy{}, image);
  options.executable = options.argv.front();
  options.inherited_fds = {seccomp->get(), status_fd};  // become kSeccompFd and kStatusFd
  options.env = std::move(env);
  options.cgroup_procs_files = cgroup.procsFiles();
  options.cgroup_fd = cgroup.directoryFd();
  options.uid = id;
  options.gid = id;
  options.cwd = "/";
  // Under no_new_privs pasta's exec of bwrap would not regain the capabilities bwrap needs in
  // pasta's user namespace; bwrap sets no_new_privs for the handler either way.
  options.no_new_privs = !spec.network;
  return ChildProcess::spawn(options);
}

Result<std::unique_ptr<PrewarmedSandbox>> SandboxRuntime::startWarm(
    const InvocationSpec& spec, std::shared_ptr<const image::ImageRoot> root, bool app_env) {
  auto cgroup = cgroups_->createInvocation(spec.resources);
  if (!cgroup.ok()) return cgroup.error();
  int status[2];
  if (::pipe2(status, O_CLOEXEC) != 0) {
    return Error::unavailable(std::string("pipe2: ") + std::strerror(errno));
  }
  UniqueFd status_read(status[0]);
  const UniqueFd status_write(status[1]);  // the sandbox's copy only, once bwrap has it
  // Nothing of any invocation: the handler's environment arrives with the hand-over. Nothing of
  // the app either, so that no app code runs before the hand-over (an app env such as
  // LD_PRELOAD, NODE_OPTIONS or a PYTHONPATH sitecustomize would run some at start), unless
  // `app_env`: the cold start of an app whose env sets what an interpreter reads only when it
  // starts (such an app is never prewarmed: prewarmable()).
  std::vector<std::string> env = warmEnvironment(spec, app_env);
  std::vector<std::string> extra;
  if (spec.language == Language::kExec) extra = {"--ro-bind", launcher_, kLauncherMount};
  auto bwrap = launch(spec, **cgroup, extra, warmHandlerCommand(spec.language, kLauncherMount),
                      std::move(env), status_write.get(), root.get());
  if (!bwrap.ok()) return bwrap.error();
  return std::make_unique<PrewarmedSandbox>(std::move(cgroup).value(), std::move(bwrap).value(),
                                            std::move(status_read), std::move(root));
}

Result<Outcome> SandboxRuntime::run(const InvocationSpec& spec, OutputSink& output) {
  auto root = check(spec);
  if (!root.ok()) return root.error();
  // An app whose env an interpreter reads only at start-up is never prewarmed (prewarmable()).
  std::unique_ptr<WarmSandbox> warm =
      prewarm_ && prewarmable(spec) ? prewarm_->take(spec) : nullptr;
  const std::string digest = *root ? (*root)->digest() : std::string();
  // A sandbox prepared on an image the name no longer resolves to (re-tagged) is not used.
  if (warm && static_cast<PrewarmedSandbox&>(*warm).imageDigest() != digest) warm.reset();
  if (warm) {
    ++prewarmed_runs_;
    return supervise(spec, static_cast<PrewarmedSandbox&>(*warm), output);
  }
  // Cold: the same sandbox, started for this invocation and handed it at once.
  auto sandbox = startWarm(spec, std::move(root).value(), /*app_env=*/!prewarmable(spec));
  if (!sandbox.ok()) return sandbox.error();
  auto outcome = supervise(spec, **sandbox, output);
  // The next invocation with these limits finds its cgroup made (this one is never reused).
  cgroups_->prepare(spec.resources);
  return outcome;
}

Result<Outcome> SandboxRuntime::supervise(const InvocationSpec& spec, PrewarmedSandbox& sandbox,
                                          OutputSink& output) {
  // The hand-over is what a cold start of the handler would exec: its argv, its environment.
  const std::string input = handoverInput(spec, kAppMount);
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
      &status, spec.cancel);
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
  if (!outcome.succeeded && !termination->timed_out && !outcome.cancelled && group.oomKilled()) {
    outcome.reason +=
        " (out of memory: limit " + std::to_string(spec.resources.memory_bytes) + " bytes)";
  }
  return outcome;
}

}  // namespace relay::runtime
