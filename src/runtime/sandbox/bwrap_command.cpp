#include "runtime/sandbox/bwrap_command.h"

#include <filesystem>
#include <iterator>

#include "runtime/handler_command.h"

namespace relay::runtime {
namespace fs = std::filesystem;

std::vector<std::string> bwrapArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                   const InvocationSpec& spec) {
  return bwrapArgv(settings, tools, spec, {}, handlerCommand(spec, kAppMount));
}

std::vector<std::string> bwrapArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                   const InvocationSpec& spec,
                                   const std::vector<std::string>& extra,
                                   std::vector<std::string> command) {
  // --unshare-user explicitly: --unshare-all only tries it, and --disable-userns needs it.
  std::vector<std::string> argv = {tools.bwrap,
                                   "--unshare-all",
                                   "--unshare-user",
                                   "--die-with-parent",
                                   "--new-session",
                                   "--cap-drop",
                                   "ALL",
                                   "--uid",
                                   std::to_string(settings.uid),
                                   "--gid",
                                   std::to_string(settings.gid),
                                   "--hostname",
                                   "relay-sandbox",
                                   "--seccomp",
                                   std::to_string(kSeccompFd)};
  // The seccomp filter denies creating user namespaces already; this also sets the sandbox's
  // user.max_user_namespaces to 0, where bwrap offers it.
  if (tools.bwrap_disable_userns) argv.push_back("--disable-userns");
  if (spec.network) {
    argv.push_back("--share-net");
    for (const char* file : {"/etc/resolv.conf", "/etc/hosts"}) {
      argv.insert(argv.end(), {"--ro-bind-try", file, file});
    }
  }
  std::error_code ec;
  for (const std::string& path : settings.system_paths) {
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
  // /dev read-only once made (its tmpfs would be an uncapped writable place); /tmp is the one
  // writable place, capped.
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--size",
                           std::to_string(settings.tmp_bytes), "--tmpfs", "/tmp"});
  argv.insert(argv.end(),
              {"--ro-bind", fs::absolute(spec.app_dir).lexically_normal().string(), kAppMount});
  argv.insert(argv.end(), extra.begin(), extra.end());
  // Last of the mount operations: the root itself (bwrap's tmpfs) becomes read-only.
  argv.insert(argv.end(), {"--remount-ro", "/", "--chdir", kAppMount, "--"});
  for (std::string& arg : command) argv.push_back(std::move(arg));
  return argv;
}

std::vector<std::string> networkPrefix(const SandboxTools& tools) {
  std::vector<std::string> argv = {
      tools.pasta, "--quiet", "--foreground", "--config-net",
      // No inbound forwarding (-t/-u) and, above all, none from the namespace's loopback to
      // the host's (-T/-U): the host's loopback services stay out of reach.
      "--tcp-ports", "none", "--udp-ports", "none", "--tcp-ns", "none", "--udp-ns", "none",
      // The gateway address would otherwise lead to the host's loopback.
      "--no-map-gw", "--"};
  if (!tools.unshare.empty()) argv.insert(argv.end(), {tools.unshare, "--mount-proc", "--"});
  return argv;
}

std::vector<std::string> sandboxArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                     const InvocationSpec& spec) {
  return sandboxArgv(settings, tools, spec, {}, handlerCommand(spec, kAppMount));
}

std::vector<std::string> sandboxArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                     const InvocationSpec& spec,
                                     const std::vector<std::string>& extra,
                                     std::vector<std::string> command) {
  std::vector<std::string> argv = bwrapArgv(settings, tools, spec, extra, std::move(command));
  if (!spec.network) return argv;
  std::vector<std::string> wrapped = networkPrefix(tools);
  wrapped.insert(wrapped.end(), std::make_move_iterator(argv.begin()),
                 std::make_move_iterator(argv.end()));
  return wrapped;
}

}  // namespace relay::runtime
