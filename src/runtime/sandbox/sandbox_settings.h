#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/image/image_cache.h"
#include "runtime/prewarm_pool.h"
#include "runtime/sandbox/cgroup.h"
#include "runtime/sandbox/sandbox_identities.h"

namespace relay::runtime {

/// Which builds the sandboxes (RELAY_SANDBOX_LAUNCHER; docs/runtimes.md "Native launcher").
enum class SandboxLauncher {
  kAuto,    // native where Relay runs as root and its self-test passes, else bwrap
  kNative,  // native or nothing (apps unavailable with the reason): for tests and operators
  kBwrap,   // bwrap always
};

/// Settings of the bubblewrap sandbox; the defaults are the secure ones.
struct SandboxSettings {
  std::string search_path = "/usr/local/bin:/usr/bin:/bin";  // where bwrap is found
  /// The uids (= gids) of the sandboxes, one per app, outside and inside the sandbox
  /// (docs/runtimes.md "Identities").
  SandboxIdRange ids;
  std::uint64_t tmp_bytes = 64ULL << 20;  // size of the private /tmp
  std::string cgroup_base_name = "relay-sandbox";
  /// How many invocations may run at once (MAX_CONCURRENCY): the sandboxes together get the
  /// CPU weight of that many ordinary processes.
  int cpu_slots = CgroupManager::kDefaultCpuSlots;
  /// Prewarmed one-shot sandboxes (docs/runtimes.md "Prewarmed sandboxes"); off: every
  /// invocation starts cold.
  bool prewarm = true;
  PrewarmSettings prewarm_settings;
  SandboxLauncher sandbox_launcher = SandboxLauncher::kAuto;
  /// relay-launcher; empty: the one beside the running executable. Without it, no prewarm.
  std::string launcher;
  /// Image roots (docs/runtimes.md "Image roots"): where images are unpacked, and the daemon
  /// whose images apps name (DOCKER_HOST; `oci:` layouts need none).
  image::ImageCacheSettings image_cache;
  std::string docker_host = "unix:///var/run/docker.sock";
  /// Host paths exposed read-only when present; never /root, /home or Relay's own files.
  std::vector<std::string> system_paths = {"/usr",
                                           "/etc/ssl",
                                           "/etc/ca-certificates",
                                           "/etc/alternatives",
                                           "/etc/ld.so.cache",
                                           "/etc/localtime",
                                           "/etc/nsswitch.conf",
                                           "/etc/mime.types"};
};

}  // namespace relay::runtime
