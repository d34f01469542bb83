#include "runtime/sandbox/sandbox_runtime.h"

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>

#include "runtime/child_process.h"
#include "runtime/handler_command.h"

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAppMount = "/app";

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
  runtime->bwrap_ = *bwrap;
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
  return runtime;
}

Availability SandboxRuntime::availability(const InvocationSpec& app_spec) const {
  if (!host_problem_.empty()) return {false, "sandbox unavailable: " + host_problem_};
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

std::vector<std::string> SandboxRuntime::bwrapArgv(const InvocationSpec& spec) const {
  std::vector<std::string> argv = {bwrap_.empty() ? "bwrap" : bwrap_,
                                   "--unshare-all",
                                   "--die-with-parent",
                                   "--new-session",
                                   "--cap-drop",
                                   "ALL",
                                   "--uid",
                                   std::to_string(settings_.uid),
                                   "--gid",
                                   std::to_string(settings_.gid),
                                   "--hostname",
                                   "relay-sandbox"};
  if (spec.network) {
    argv.push_back("--share-net");
    for (const char* file : {"/etc/resolv.conf", "/etc/hosts"}) {
      argv.insert(argv.end(), {"--ro-bind-try", file, file});
    }
  }
  std::error_code ec;
  for (const std::string& path : settings_.system_paths) {
    argv.insert(argv.end(), {"--ro-bind-try", path, path});
  }
  // Merged-/usr hosts have /bin, /lib... as symlinks into /usr; mirror them, else bind them.
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    if (fs::is_symlink(top, ec)) {
      argv.insert(argv.end(), {"--symlink", fs::read_symlink(top, ec).string(), top});
    } else if (fs::is_directory(top, ec)) {
      argv.insert(argv.end(), {"--ro-bind", top, top});
    }
  }
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--size",
                           std::to_string(settings_.tmp_bytes), "--tmpfs", "/tmp"});
  argv.insert(argv.end(), {"--ro-bind", fs::absolute(spec.app_dir).lexically_normal().string(),
                           kAppMount, "--chdir", kAppMount, "--"});
  for (std::string& arg : handlerCommand(spec, kAppMount)) argv.push_back(std::move(arg));
  return argv;
}

Result<Outcome> SandboxRuntime::run(const InvocationSpec& spec, OutputSink& output) {
  const Availability available = availability(spec);
  if (!available.available) return Error::unavailable(available.reason);
  auto cgroup = cgroups_->createInvocation(spec.resources);
  if (!cgroup.ok()) return cgroup.error();
  InvocationCgroup& group = **cgroup;

  LaunchOptions options;
  options.executable = bwrap_;
  options.argv = bwrapArgv(spec);
  for (const auto& [key, value] : handlerEnvironment(spec))
    options.env.push_back(key + "=" + value);
  options.cgroup_procs_files = group.procsFiles();
  options.cgroup_fd = group.directoryFd();
  options.uid = settings_.uid;
  options.gid = settings_.gid;
  options.cwd = "/";

  const MonoTime start = clock_.monotonicNow();
  auto child = ChildProcess::spawn(options);
  if (!child.ok()) return child.error();
  const std::string prefix = outputPrefix(spec);
  LineSplitter out(prefix, output);
  LineSplitter err(prefix, output);
  ChildProcess& process = **child;
  // The cgroup holds bwrap and everything below it, whatever sessions the handler creates.
  // SIGTERM spares bwrap and its namespace init, so the handler gets its grace period instead
  // of losing its whole pid namespace at once; SIGKILL takes everything.
  const pid_t bwrap_pid = process.pid();
  auto termination = process.supervise(
      spec.input, out, err, clock_, spec.timeout,
      [&group, bwrap_pid](int sig) { group.signalAll(sig, sig == SIGKILL ? -1 : bwrap_pid); });
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
