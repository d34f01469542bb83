#include "runtime/handler_command.h"

#include <unistd.h>

#include <array>

namespace relay::runtime {
namespace {

// argv: <handler a.b.fn> <app root>. Imports a/b.py from the app root, calls fn(event) with the
// decoded stdin JSON (awaiting it when it is a coroutine). An exception fails the invocation
// (traceback on stderr, exit 1); sys.exit(n) exits n as usual.
constexpr const char* kPythonBootstrap = R"PY(
import asyncio, importlib, inspect, json, sys, traceback
sys.dont_write_bytecode = True
handler, app_root = sys.argv[1], sys.argv[2]
module_name, _, function_name = handler.rpartition(".")
sys.path.insert(0, app_root)
try:
    event = json.loads(sys.stdin.buffer.read())
    function = getattr(importlib.import_module(module_name), function_name)
    result = function(event)
    if inspect.isawaitable(result):
        asyncio.run(result) if inspect.iscoroutine(result) else asyncio.get_event_loop().run_until_complete(result)
except SystemExit:
    raise
except BaseException:
    traceback.print_exc()
    sys.stderr.flush()
    sys.exit(1)
)PY";

// argv: <handler a.b.fn> <app root>. Loads the first of a/b.mjs, a/b/index.mjs, a/b.js,
// a/b/index.js, a/b.cjs and awaits export fn(event). A throw or a rejected Promise fails the
// invocation (stack on stderr, exit 1).
constexpr const char* kNodeBootstrap = R"JS(
const fs = require("fs"), path = require("path"), url = require("url");
const [handler, appRoot] = process.argv.slice(1);
const dot = handler.lastIndexOf(".");
const base = path.join(appRoot, ...handler.slice(0, dot).split("."));
const fnName = handler.slice(dot + 1);
(async () => {
  const candidates = [base + ".mjs", path.join(base, "index.mjs"), base + ".js",
                      path.join(base, "index.js"), base + ".cjs"];
  const file = candidates.find((f) => fs.existsSync(f));
  if (!file) throw new Error("handler module not found: " + candidates.join(", "));
  const mod = await import(url.pathToFileURL(file).href);
  const fn = typeof mod[fnName] === "function" ? mod[fnName]
           : mod.default && typeof mod.default[fnName] === "function" ? mod.default[fnName]
           : undefined;
  if (!fn) throw new Error(`${file} has no exported function ${fnName}`);
  const event = JSON.parse(fs.readFileSync(0, "utf8"));
  await fn(event);
})().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exitCode = 1;
});
)JS";

}  // namespace

const char* pythonBootstrap() { return kPythonBootstrap; }
const char* nodeBootstrap() { return kNodeBootstrap; }

Result<std::filesystem::path> resolveHandlerFile(const InvocationSpec& spec) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (spec.language == Language::kExec) {
    const fs::path file = spec.app_dir / spec.handler;
    if (!fs::is_regular_file(file, ec)) {
      return Error::notFound("handler file " + file.string() + " does not exist");
    }
    if (::access(file.c_str(), X_OK) != 0) {
      return Error::notFound("handler file " + file.string() + " is not executable");
    }
    return file;
  }
  const std::size_t dot = spec.handler.rfind('.');
  std::string module = spec.handler.substr(0, dot == std::string::npos ? 0 : dot);
  for (char& c : module) {
    if (c == '.') c = '/';
  }
  const fs::path base = spec.app_dir / module;
  if (spec.language == Language::kPython3) {
    fs::path file = base;
    file += ".py";
    if (fs::is_regular_file(file, ec)) return file;
    return Error::notFound("handler module " + file.string() + " does not exist");
  }
  const std::array<fs::path, 5> candidates = {fs::path(base.string() + ".mjs"), base / "index.mjs",
                                              fs::path(base.string() + ".js"), base / "index.js",
                                              fs::path(base.string() + ".cjs")};
  for (const fs::path& candidate : candidates) {
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  return Error::notFound("handler module not found: none of " + base.string() +
                         ".mjs, index.mjs, .js, index.js, .cjs exists");
}

std::vector<std::string> handlerCommand(const InvocationSpec& spec, const std::string& app_root) {
  switch (spec.language) {
    case Language::kPython3:
      return {"python3", "-c", kPythonBootstrap, spec.handler, app_root};
    case Language::kNode:
      return {"node", "-e", kNodeBootstrap, spec.handler, app_root};
    case Language::kExec:
      break;
  }
  return {app_root + "/" + spec.handler};
}

}  // namespace relay::runtime
