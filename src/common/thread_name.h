#pragma once

#include <string_view>

namespace relay {

/// Names the calling thread as `top -H`, `ps -L`, perf and /proc/<pid>/task/*/comm show it
/// (the kernel keeps 15 bytes: longer names are cut).
void nameThisThread(std::string_view name);

}  // namespace relay
