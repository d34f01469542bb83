#pragma once

#include <string>
#include <vector>

#include "runtime/runtime.h"

namespace relay::runtime {

/// The argv that runs spec's handler when the app directory is visible at `app_root` (`/app`
/// inside a sandbox or container, the real directory for the process backend). python3 and
/// node get Relay's bootstrap inline (`-c` / `-e`), so nothing has to be installed next to the
/// app. argv[0] is `python3`, `node` or the handler path; callers resolve it if they exec
/// without a PATH search.
std::vector<std::string> handlerCommand(const InvocationSpec& spec, const std::string& app_root);

/// What a prewarmed sandbox runs while it waits for its hand-over (docs/runtimes.md
/// "Prewarmed sandboxes"): python3 and node already started with a bootstrap that reads the
/// hand-over and then runs the handed command's code; for exec handlers `launcher` (the path of
/// relay-launcher inside the sandbox), which execs the handed command.
std::vector<std::string> warmHandlerCommand(Language language, const std::string& launcher);

/// The bootstrap sources, exposed for tests.
const char* pythonBootstrap();
const char* nodeBootstrap();

}  // namespace relay::runtime
