#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace relay {

/// Names the calling thread as `top -H`, `ps -L`, perf and /proc/<pid>/task/*/comm show it
/// (the kernel keeps 15 bytes: longer names are cut).
void nameThisThread(std::string_view name);

/// Starts a thread that names itself `name` (nameThisThread) and runs `body`: every thread of
/// the worker is started this way (docs/operations.md "Threads").
std::thread namedThread(std::string name, std::function<void()> body);

}  // namespace relay
