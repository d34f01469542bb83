#include "runtime/sandbox/sandbox_probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/child_process.h"
#include "runtime/handover.h"
#include "runtime/output_lines.h"

namespace relay::runtime {
namespace {

constexpr std::chrono::seconds kProbeTimeout{10};

/// Keeps the lines a probe printed.
class CollectingSink final : public OutputSink {
 public:
  void line(std::string_view text) override {
    if (!text_.empty()) text_ += "; ";
    text_.append(text);
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

struct ProbeRun {
  ChildProcess::Termination termination;
  std::string output;  // stdout and stderr, lines joined by "; "
};

Result<ProbeRun> runToCompletion(const LaunchOptions& options, Clock& clock) {
  auto child = ChildProcess::spawn(options);
  if (!child.ok()) return child.error();
  CollectingSink sink;
  LineSplitter out("", sink);
  LineSplitter err("", sink);
  ChildProcess& process = **child;
  auto ended = process.supervise({}, out, err, clock, kProbeTimeout,
                                 [&process](int signal) { process.signalGroup(signal); });
  if (!ended.ok()) return ended.error();
  return ProbeRun{*ended, sink.text()};
}

}  // namespace

bool bwrapSupports(const std::string& bwrap, std::string_view option, Clock& clock) {
  LaunchOptions options;
  options.executable = bwrap;
  options.argv = {bwrap, "--help"};
  auto run = runToCompletion(options, clock);
  return run.ok() && run->output.find(option) != std::string::npos;
}

Status probeSandbox(const SandboxSettings& settings, const SandboxTools& tools,
                    const SeccompFilter& seccomp, Clock& clock, bool network,
                    const std::string& launcher, const EgressPolicy& egress) {
  // /usr mounted as the "app", so the command is /app/bin/true: no app of the user involved.
  InvocationSpec spec;
  spec.app = "probe";
  spec.app_dir = "/usr";
  spec.handler = "bin/true";
  spec.network = network;
  auto program = seccomp.openProgram();
  if (!program.ok()) return program.error();
  LaunchOptions options;
  // Relay's own id, which no app gets (SandboxIdentities::probe()).
  const uid_t id = settings.ids.first;
  options.argv = launcher.empty() ? sandboxArgv(settings, tools, spec, id, egress)
                                  : sandboxArgv(settings, tools, spec, id,
                                                {"--ro-bind", launcher, kLauncherMount},
                                                {kLauncherMount}, egress);
  options.executable = options.argv.front();
  options.uid = id;
  options.gid = id;
  options.cwd = "/";
  options.inherited_fds = {program->get()};
  options.no_new_privs = !network;  // as SandboxRuntime::run
  auto run = runToCompletion(options, clock);
  const std::string what = network ? "pasta and bwrap" : "bwrap";
  if (!run.ok()) return Error::unavailable("cannot start " + what + ": " + run.error().message);
  const ChildProcess::Termination& ended = run->termination;
  if (ended.exited && ended.code == 0) return {};
  const std::string how = ended.timed_out ? "did not finish"
                          : ended.exited  ? "exited " + std::to_string(ended.code)
                                          : "died of signal " + std::to_string(ended.signal);
  return Error::unavailable(what + " cannot start a sandbox on this host (" + how +
                            (run->output.empty() ? "" : ": " + run->output) + ")");
}

Status probeNative(const SandboxSettings& settings, const std::string& launcher,
                   const NativeTemplate& tree, const SeccompFilter& seccomp, Clock& clock) {
  InvocationSpec spec;
  spec.app = "probe";
  spec.app_dir = "/usr";
  const uid_t id = settings.ids.first;  // Relay's own probe id, which no app gets
  auto program = seccomp.openProgram();
  if (!program.ok()) return program.error();
  int status[2];
  if (::pipe2(status, O_CLOEXEC) != 0) {
    return Error::unavailable(std::string("pipe2: ") + std::strerror(errno));
  }
  const UniqueFd status_read(status[0]);
  const UniqueFd status_write(status[1]);
  LaunchOptions options;
  options.argv =
      nativeArgv(settings, launcher, spec, id, {kLauncherMount, "--self-test", std::to_string(id)});
  options.executable = launcher;
  options.cwd = "/";
  // 3 the seccomp program, 4 a status descriptor (nobody reads it), 5 the prepared tree.
  options.inherited_fds = {program->get(), status_write.get(), tree.fd()};
  auto run = runToCompletion(options, clock);
  if (!run.ok()) return Error::unavailable("native launcher: " + run.error().message);
  const ChildProcess::Termination& ended = run->termination;
  if (ended.exited && ended.code == 0) return {};
  return Error::unavailable("the native launcher's self-test failed (" +
                            (ended.exited ? "exit " + std::to_string(ended.code)
                                          : "signal " + std::to_string(ended.signal)) +
                            (run->output.empty() ? "" : ": " + run->output) + ")");
}

bool modeGrants(const struct stat& info, uid_t uid, gid_t gid, unsigned access) {
  const int shift = info.st_uid == uid ? 6 : info.st_gid == gid ? 3 : 0;
  return ((info.st_mode >> shift) & access) == access;
}

std::string tunAccessProblem(const std::string& path, uid_t uid, gid_t gid) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return path + " cannot be opened (" + std::strerror(errno) +
           "): pasta needs the tun device (mknod " + path + " c 10 200; chmod 0666 " + path + ")";
  }
  if (modeGrants(info, uid, gid, 4 | 2)) return {};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  return path + " is mode " + mode + ", owner uid " + std::to_string(info.st_uid) +
         ": the sandbox user (uid " + std::to_string(uid) +
         ") cannot open it, so pasta cannot make a network (Debian's default is 0666: chmod 0666 " +
         path + ")";
}

}  // namespace relay::runtime
