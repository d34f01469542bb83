#include "runtime/sandbox/native_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/enum_names.h"
#include "runtime/child_process.h"
#include "runtime/handover.h"

namespace relay::runtime {
namespace {

constexpr EnumNames<SandboxLauncher, 3> kLauncherNames = {{{
    {SandboxLauncher::kAuto, "auto"},
    {SandboxLauncher::kNative, "native"},
    {SandboxLauncher::kBwrap, "bwrap"},
}}};

constexpr int kTemplateTimeoutMs = 10000;

}  // namespace

std::string_view sandboxLauncherName(SandboxLauncher launcher) {
  return kLauncherNames.name(launcher);
}

std::optional<SandboxLauncher> sandboxLauncherFromName(std::string_view name) {
  return kLauncherNames.parse(name);
}

bool nativeBuilds(const InvocationSpec& spec) { return !spec.network && spec.image.empty(); }

Result<std::unique_ptr<NativeTemplate>> NativeTemplate::create(const SandboxSettings& settings,
                                                               const std::string& launcher) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    return Error::unavailable(std::string("pipe2: ") + std::strerror(errno));
  }
  UniqueFd ready_read(ready[0]);
  UniqueFd ready_write(ready[1]);
  LaunchOptions options;
  options.executable = launcher;
  options.argv = {launcher, "--native-template", launcher};
  for (const std::string& path : settings.system_paths) options.argv.push_back(path);
  options.cwd = "/";
  // 3: "ready"; 4 (the status descriptor of every sandbox): the reason it could not be.
  options.inherited_fds = {ready_write.get(), ready_write.get()};
  auto child = ChildProcess::spawn(options);
  if (!child.ok()) return child.error();
  ready_write.reset();
  std::string said;
  pollfd wait{ready_read.get(), POLLIN, 0};
  while (said.find('\n') == std::string::npos && ::poll(&wait, 1, kTemplateTimeoutMs) > 0) {
    char buffer[512];
    const ssize_t n = ::read(ready_read.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    said.append(buffer, static_cast<std::size_t>(n));
  }
  if (said != "ready\n") {
    return Error::unavailable(
        "the native launcher cannot prepare its tree" +
        (said.empty() ? std::string(" (no answer)") : ": " + said.substr(0, said.find('\n'))));
  }
  // The namespace outlives the process that made it for as long as this descriptor is open;
  // the process is ended (and reaped) when `child` goes.
  UniqueFd ns(::open(("/proc/" + std::to_string((*child)->pid()) + "/ns/mnt").c_str(),
                     O_RDONLY | O_CLOEXEC));
  if (!ns.valid()) {
    return Error::unavailable(std::string("cannot keep the prepared tree: ") +
                              std::strerror(errno));
  }
  return std::unique_ptr<NativeTemplate>(new NativeTemplate(std::move(ns)));
}

std::vector<std::string> nativeArgv(const SandboxSettings& settings, const std::string& launcher,
                                    const InvocationSpec& spec, uid_t id,
                                    std::vector<std::string> command) {
  std::vector<std::string> argv = {
      launcher,
      "--native",
      std::to_string(id),
      std::to_string(settings.tmp_bytes),
      std::filesystem::absolute(spec.app_dir).lexically_normal().string(),
      "--"};
  for (std::string& arg : command) argv.push_back(std::move(arg));
  return argv;
}

}  // namespace relay::runtime
