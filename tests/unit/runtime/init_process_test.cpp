#include "runtime/init_process.h"

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

TEST(MountsBelowProc, DockersMaskedAndReadOnlyPathsLastMountedFirst) {
  // What Docker 20.10 mounts over /proc in a container without systempaths=unconfined.
  const std::string mounts =
      "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
      "tmpfs /dev tmpfs rw,nosuid,size=65536k,mode=755 0 0\n"
      "proc /proc/bus proc ro,nosuid,nodev,noexec,relatime 0 0\n"
      "proc /proc/sys proc ro,nosuid,nodev,noexec,relatime 0 0\n"
      "tmpfs /proc/acpi tmpfs ro,relatime 0 0\n"
      "tmpfs /proc/kcore tmpfs rw,nosuid,size=65536k,mode=755 0 0\n"
      "tmpfs /procfs-not-proc tmpfs rw 0 0\n";
  EXPECT_EQ(mountsBelowProc(mounts),
            (std::vector<std::string>{"/proc/kcore", "/proc/acpi", "/proc/sys", "/proc/bus"}));
  EXPECT_TRUE(mountsBelowProc("proc /proc proc rw 0 0\n").empty());
}

}  // namespace
}  // namespace relay::runtime
