#include "runtime/image/image_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace relay::runtime::image {

bool ImageRoot::hasExecutable(std::string_view name, std::string_view search_path) const {
  UniqueFd root(::open(rootfs_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return false;
  std::size_t start = 0;
  while (start <= search_path.size()) {
    const std::size_t colon = std::min(search_path.find(':', start), search_path.size());
    const std::string path =
        std::string(search_path.substr(start, colon - start)) + "/" + std::string(name);
    start = colon + 1;
    // As the image sees it: an absolute symlink (/usr/bin/python3 -> /usr/bin/python3.11)
    // resolves inside the image, never on the host.
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    UniqueFd file(
        static_cast<int>(::syscall(SYS_openat2, root.get(), path.c_str(), &how, sizeof how)));
    struct stat info {};
    if (file.valid() && ::fstat(file.get(), &info) == 0 && S_ISREG(info.st_mode) &&
        (info.st_mode & 0111) != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace relay::runtime::image
