#include "runtime/sandbox/sandbox_runtime.h"

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>

#include "runtime/child_process.h"
#include "runtime/handler_command.h"
#include "runtime/output_lines.h"
#include "runtime/sandbox/sandbox_probe.h"

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;

// Whether `uid` (not the owner, not in the group) can list and read `dir`: every ancestor
// must be searchable by others, the directory itself readable and searchable.
bool readableByOthers(const fs::path& dir, uid_t uid) {
  fs::path current;
  for (const fs::path& part : fs::absolute(dir)) {
    current /= part;
    struct stat info {};
    if (::stat(current.c_str(), &info) != 0) return false;
    const bool owner = info.st_uid == uid;
    const mode_t search = owner ? S_IXUSR : S_IXOTH;
    if ((info.st_mode & search) == 0) return false;
  }
  struct stat info {};
  ::stat(dir.c_str(), &info);
  return (info.st_mode & (info.st_uid == uid ? S_IRUSR : S_IROTH)) != 0;
}

}  // namespace

std::unique_ptr<SandboxRuntime> SandboxRuntime::create(Clock& clock, SandboxSettings settings) {
  const std::string base = settings.cgroup_base_name;
  return create(clock, std::move(settings),
                detectCgroupLayout("/proc/self/mounts", "/proc/self/cgroup", base));
}

std::unique_ptr<SandboxRuntime> SandboxRuntime::create(Clock& clock, SandboxSettings settings,
                                                       Result<CgroupLayout> layout) {
  std::unique_ptr<SandboxRuntime> runtime(new SandboxRuntime(clock, std::move(settings)));
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
    return runtime;
  }
  runtime->cgroups_ = std::move(cgroups).value();
  if (auto probe = probeSandbox(runtime->settings_, runtime->tools_, *runtime->seccomp_, clock);
      !probe.ok()) {
    runtime->host_problem_ = probe.error().message;
    return runtime;
  }
  runtime->network_problem_ = runtime->checkNetwork(clock);
  return runtime;
}

std::string SandboxRuntime::checkNetwork(Clock& clock) {
  const auto pasta = findExecutable("pasta", settings_.search_path);
  if (!pasta) {
    return "pasta not found on " + settings_.search_path +
           ": it gives a network: true handler its own network namespace (apt-get install passt)";
  }
  tools_.pasta = *pasta;
  auto probe = probeSandbox(settings_, tools_, *seccomp_, clock, /*network=*/true);
  return probe.ok() ? std::string() : probe.error().message;
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
  if (!readableByOthers(app_spec.app_dir, settings_.uid)) {
    return {false, "app directory " + app_spec.app_dir.string() +
                       " is not readable by the sandbox user (uid " +
                       std::to_string(settings_.uid) + "): make it and its parents world-readable"};
  }
  if (auto file = resolveHandlerFile(app_spec); !file.ok()) return {false, file.error().message};
  if (app_spec.language != Language::kExec) {
    const char* interpreter = languageName(app_spec.language);
    if (!findExecutable(interpreter, "/usr/local/bin:/usr/bin")) {
      return {false, std::string(interpreter) + " is not installed under /usr"};
    }
  }
  return {};
}

Result<Outcome> SandboxRuntime::run(const InvocationSpec& spec, OutputSink& output) {
  const Availability available = availability(spec);
  if (!available.available) return Error::unavailable(available.reason);
  auto cgroup = cgroups_->createInvocation(spec.resources);
  if (!cgroup.ok()) return cgroup.error();
  InvocationCgroup& group = **cgroup;

  auto seccomp = seccomp_->openProgram();
  if (!seccomp.ok()) return seccomp.error();

  LaunchOptions options;
  options.argv = sandboxArgv(settings_, tools_, spec);
  options.executable = options.argv.front();
  options.inherited_fds = {seccomp->get()};  // becomes kSeccompFd
  for (const auto& [key, value] : handlerEnvironment(spec))
    options.env.push_back(key + "=" + value);
  options.cgroup_procs_files = group.procsFiles();
  options.cgroup_fd = group.directoryFd();
  options.uid = settings_.uid;
  options.gid = settings_.gid;
  options.cwd = "/";
  // Under no_new_privs pasta's exec of bwrap would not regain the capabilities bwrap needs in
  // pasta's user namespace; bwrap sets no_new_privs for the handler either way.
  options.no_new_privs = !spec.network;

  const MonoTime start = clock_.monotonicNow();
  auto child = ChildProcess::spawn(options);
  if (!child.ok()) return child.error();
  const std::string prefix = outputPrefix(spec);
  LineSplitter out(prefix, output);
  LineSplitter err(prefix, output);
  ChildProcess& process = **child;
  // The cgroup holds bwrap (under pasta with network) and everything below it, whatever
  // sessions the handler creates. SIGTERM spares the process Relay started and its direct
  // children (bwrap and its namespace init, or pasta and bwrap; an init ignores SIGTERM
  // anyway), so the handler gets its grace period instead of losing its whole pid namespace at
  // once; SIGKILL takes everything.
  const pid_t root_pid = process.pid();
  auto termination = process.supervise(
      spec.input, out, err, clock_, spec.timeout,
      [&group, root_pid](int sig) { group.signalAll(sig, sig == SIGKILL ? -1 : root_pid); });
  // The next invocation with these limits finds its cgroup made (this one is never reused).
  cgroups_->prepare(spec.resources);
  if (!termination.ok()) return termination.error();
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
