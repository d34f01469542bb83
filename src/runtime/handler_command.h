#pragma once

#include <string>
#include <string_view>
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

/// The environment a prewarmed sandbox or container starts with, as KEY=VALUE: nothing of any
/// invocation (no RELAY_* variable), and nothing of the app either unless `app_env` (an
/// interpreter's cold start for an app that is not prewarmable()): no app code runs before the
/// hand-over (docs/runtimes.md "Prewarmed sandboxes"). relay-launcher never gets the app's env.
std::vector<std::string> warmEnvironment(const InvocationSpec& spec, bool app_env);

/// The environment a cold start gives spec's handler (handlerEnvironment), as KEY=VALUE.
std::vector<std::string> handlerEnvironmentStrings(const InvocationSpec& spec);

/// What a prewarmed sandbox or container is handed for spec (docs/runtimes.md "Prewarmed
/// sandboxes"): the hand-over of exactly what a cold start would exec, with the app at
/// `app_root`, followed by the event. The launcher or warm interpreter reads it on stdin.
std::string handoverInput(const InvocationSpec& spec, const std::string& app_root);

/// Whether an interpreter (python3, node; not exec) reads `key` only when it starts: the
/// loader (LD_*), libc and the locale, python's PYTHON* but PYTHONPATH, node's NODE_* and
/// UV_*. A prewarmed interpreter starts without the app's env, so that no code of the app
/// runs before its hand-over (docs/runtimes.md "Prewarmed sandboxes"), and could not apply
/// such a variable later.
bool readAtInterpreterStart(Language language, std::string_view key);
/// Whether spec's invocations may be handed to a prewarmed sandbox: no variable of its app's
/// env is readAtInterpreterStart(); otherwise they start cold, with their whole env.
bool prewarmable(const InvocationSpec& spec);

/// The bootstrap sources, exposed for tests.
const char* pythonBootstrap();
const char* nodeBootstrap();

}  // namespace relay::runtime
