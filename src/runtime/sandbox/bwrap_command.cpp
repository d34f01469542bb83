#include "runtime/sandbox/bwrap_command.h"

#include <filesystem>
#include <iterator>
#include <set>

#include "runtime/handler_command.h"

namespace relay::runtime {
namespace fs = std::filesystem;
namespace {

// The host's system paths, read-only: the root of a sandbox whose app names no image.
void bindHostRoot(const SandboxSettings& settings, std::vector<std::string>& argv) {
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
}

// The image's own root (docs/runtimes.md "Image roots"). What the sandbox makes itself (a fresh
// /proc, /dev, /tmp, the app at /app) or mounts (/run/relay-launcher) is never the image's.
void bindImageRoot(const image::ImageRoot& image, std::vector<std::string>& argv) {
  static const std::set<std::string> kSandboxOwn = {"proc", "dev", "sys", "tmp", "run", "app"};
  for (const image::ImageRoot::TopEntry& entry : image.topLevel()) {
    if (kSandboxOwn.count(entry.name) > 0) continue;
    const std::string target = "/" + entry.name;
    if (!entry.symlink.empty()) {
      argv.insert(argv.end(), {"--symlink", entry.symlink, target});
    } else {
      argv.insert(argv.end(), {"--ro-bind", (image.rootfs() / entry.name).string(), target});
    }
  }
}

}  // namespace

std::vector<std::string> bwrapArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                   const InvocationSpec& spec, uid_t id) {
  return bwrapArgv(settings, tools, spec, id, {}, handlerCommand(spec, kAppMount));
}

std::vector<std::string> bwrapArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                   const InvocationSpec& spec, uid_t id,
                                   const std::vector<std::string>& extra,
                                   std::vector<std::string> command,
                                   const image::ImageRoot* image) {
  // --unshare-user explicitly: --unshare-all only tries it, and --disable-userns needs it.
  std::vector<std::string> argv = {tools.bwrap,
                                   "--unshare-all",
                                   "--unshare-user",
                                   "--die-with-parent",
                                   "--new-session",
                                   "--cap-drop",
                                   "ALL",
                                   "--uid",
                                   std::to_string(id),
                                   "--gid",
                                   std::to_string(id),
                                   "--hostname",
                                   "relay-sandbox",
                                   "--seccomp",
                                   std::to_string(kSeccompFd)};
  // The seccomp filter denies creating user namespaces already; this also sets the sandbox's
  // user.max_user_namespaces to 0, where bwrap offers it.
  if (tools.bwrap_disable_userns) argv.push_back("--disable-userns");
  if (image != nullptr) {
    bindImageRoot(*image, argv);
  } else {
    bindHostRoot(settings, argv);
  }
  if (spec.network) {
    argv.push_back("--share-net");
    // The host's, over the image's own (an image root has both files: ImageCache makes them).
    for (const char* file : {"/etc/resolv.conf", "/etc/hosts"}) {
      argv.insert(argv.end(), {"--ro-bind-try", file, file});
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

std::vector<std::string> networkPrefix(const SandboxTools& tools, const EgressPolicy& egress) {
  std::vector<std::string> argv = {
      tools.pasta, "--quiet", "--foreground", "--config-net",
      // No inbound forwarding (-t/-u) and, above all, none from the namespace's loopback to
      // the host's (-T/-U): the host's loopback services stay out of reach.
      "--tcp-ports", "none", "--udp-ports", "none", "--tcp-ns", "none", "--udp-ns", "none",
      // The gateway address would otherwise lead to the host's loopback.
      "--no-map-gw", "--"};
  if (!tools.unshare.empty()) argv.insert(argv.end(), {tools.unshare, "--mount-proc", "--"});
  // Link-local, the host's own addresses and, with an egress list, everything it does not
  // name: pasta would connect to them from the host for the handler.
  argv.insert(argv.end(), {tools.launcher, "--egress", encodeEgressPolicy(egress)});
  return argv;
}

std::vector<std::string> sandboxArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                     const InvocationSpec& spec, uid_t id,
                                     const EgressPolicy& egress) {
  return sandboxArgv(settings, tools, spec, id, {}, handlerCommand(spec, kAppMount), egress);
}

std::vector<std::string> sandboxArgv(const SandboxSettings& settings, const SandboxTools& tools,
                                     const InvocationSpec& spec, uid_t id,
                                     const std::vector<std::string>& extra,
                                     std::vector<std::string> command, const EgressPolicy& egress,
                                     const image::ImageRoot* image) {
  std::vector<std::string> argv =
      bwrapArgv(settings, tools, spec, id, extra, std::move(command), image);
  if (!spec.network) return argv;
  std::vector<std::string> wrapped = networkPrefix(tools, egress);
  wrapped.insert(wrapped.end(), std::make_move_iterator(argv.begin()),
                 std::make_move_iterator(argv.end()));
  return wrapped;
}

}  // namespace relay::runtime
