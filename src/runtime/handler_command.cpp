#include "runtime/handler_command.h"

#include "runtime/handover.h"

namespace relay::runtime {
namespace {

// argv: <handler a.b.fn> <app root>. Imports a/b.py from the app root, calls fn(event) with the
// decoded stdin JSON (awaiting it when it is a coroutine). An exception fails the invocation
// (traceback on stderr, exit 1); sys.exit(n) exits n as usual. Integers of any length decode:
// Relay accepts them (docs/patterns.md "Events"), while Python 3.11+ refuses int() of more
// than 4300 digits unless its limit is lifted, here for the event only.
constexpr const char* kPythonBootstrap = R"PY(
import asyncio, importlib, inspect, json, sys, traceback
sys.dont_write_bytecode = True
handler, app_root = sys.argv[1], sys.argv[2]
module_name, _, function_name = handler.rpartition(".")
sys.path.insert(0, app_root)
def _relay_decode(data):
    if not hasattr(sys, "set_int_max_str_digits"):
        return json.loads(data)
    saved = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return json.loads(data)
    finally:
        sys.set_int_max_str_digits(saved)
try:
    event = _relay_decode(sys.stdin.buffer.read())
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

// A prewarmed python3 sandbox (docs/runtimes.md "Prewarmed sandboxes"): the interpreter starts
// and imports what the bootstrap above needs ahead of demand, then reads the hand-over
// (src/runtime/handover.h) from fd 0 unbuffered, byte-exact, so the event stays for the
// handler. It takes the handed environment as its own and runs the handed `python3 -c <code>
// args...` command's code as __main__ would; any other command is exec'd as it is. Like
// relay-launcher it reports on fd 4 (kStatusFd): `started` before the handed code runs, or
// `refused: <why>` for a hand-over it cannot take (docs/runtimes.md "Set-up failures"). No
// code of the app runs before the hand-over: a prewarmed interpreter starts without the app's
// env, and the working directory (/app), which `-c` puts first on sys.path, is taken off it
// until then; at hand-over sys.path becomes what a cold start has: '', the handed PYTHONPATH,
// the rest.
constexpr const char* kPythonWarmBootstrap = R"PY(
import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
import asyncio, importlib, inspect, json, os, traceback
def _report(text):
    try:
        os.write(4, text)
    except OSError:
        pass
def _refuse(why):
    _report(b"refused: " + why.encode() + b"\n")
    sys.exit("relay: " + why)
def _read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            _refuse("hand-over cut short")
        data += chunk
    return data
def _handover():
    line = b""
    while not line.endswith(b"\n"):
        c = os.read(0, 1)
        if not c:
            os._exit(0)
        line += c
        if len(line) > 96:
            _refuse("malformed hand-over")
    parts = line.split()
    if len(parts) != 5 or parts[:2] != [b"RELAY-HANDOVER", b"1"]:
        _refuse("malformed hand-over")
    argc, envc, size = int(parts[2]), int(parts[3]), int(parts[4])
    if size > 4 << 20:
        _refuse("malformed hand-over: payload too large")
    strings = _read(size).split(b"\0")[:-1] if size else []
    if argc == 0 or len(strings) != argc + envc:
        _refuse("malformed hand-over")
    return strings[:argc], strings[argc:]
_argv, _env = _handover()
os.environb.clear()
for _var in _env:
    _key, _, _value = _var.partition(b"=")
    os.environb[_key] = _value
sys.path[0:0] = [""] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
_report(b"started\n")
try:
    os.close(4)
except OSError:
    pass
if _argv[:2] != [b"python3", b"-c"] or len(_argv) < 3:
    os.execvpe(_argv[0], _argv, os.environ)
sys.argv = ["-c"] + [a.decode("utf-8", "surrogateescape") for a in _argv[3:]]
_code = compile(_argv[2].decode("utf-8", "surrogateescape"), "<string>", "exec")
exec(_code, {"__name__": "__main__", "__builtins__": __builtins__})
)PY";

// The same for node: `node -e` starts ahead of demand, reads the hand-over synchronously from
// fd 0, replaces process.env and process.argv, reports on fd 4, and evaluates the handed
// `node -e <code>` code.
constexpr const char* kNodeWarmBootstrap = R"JS(
const relayFs = require("fs");
const relayReport = (text) => { try { relayFs.writeSync(4, text); } catch (e) {} };
const relayRefuse = (why) => {
  relayReport("refused: " + why + "\n");
  console.error("relay: " + why);
  process.exit(127);
};
const relayRead = (n) => {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const r = relayFs.readSync(0, buf, got, n - got, null);
    if (r === 0) relayRefuse("hand-over cut short");
    got += r;
  }
  return buf;
};
let relayLine = "";
for (;;) {
  const b = Buffer.alloc(1);
  if (relayFs.readSync(0, b, 0, 1, null) === 0) process.exit(0);
  if (b[0] === 10) break;
  relayLine += String.fromCharCode(b[0]);
  if (relayLine.length > 96) relayRefuse("malformed hand-over");
}
const relayParts = relayLine.split(" ");
const [relayArgc, relayEnvc, relaySize] = relayParts.slice(2).map(Number);
if (relaySize > 4 * 1024 * 1024) relayRefuse("malformed hand-over: payload too large");
const relayStrings = [];
if (relaySize > 0) {
  const payload = relayRead(relaySize);
  for (let i = 0, start = 0; i < payload.length; i++) {
    if (payload[i] === 0) { relayStrings.push(payload.subarray(start, i).toString("utf8")); start = i + 1; }
  }
}
const relayArgv = relayStrings.slice(0, relayArgc);
if (relayParts.length !== 5 || relayParts[0] !== "RELAY-HANDOVER" || relayParts[1] !== "1" ||
    relayStrings.length !== relayArgc + relayEnvc || relayArgv[0] !== "node" || relayArgv[1] !== "-e") {
  relayRefuse("malformed hand-over");
}
for (const key of Object.keys(process.env)) delete process.env[key];
for (const v of relayStrings.slice(relayArgc)) {
  const eq = v.indexOf("=");
  process.env[v.slice(0, eq)] = v.slice(eq + 1);
}
relayReport("started\n");
try { relayFs.closeSync(4); } catch (e) {}
process.argv.splice(1, process.argv.length - 1, ...relayArgv.slice(3));
eval(relayArgv[2]);
)JS";

}  // namespace

std::vector<std::string> warmHandlerCommand(Language language, const std::string& launcher) {
  switch (language) {
    case Language::kPython3:
      return {"python3", "-c", kPythonWarmBootstrap};
    case Language::kNode:
      return {"node", "-e", kNodeWarmBootstrap};
    case Language::kExec:
      break;
  }
  return {launcher};
}

std::vector<std::string> handlerEnvironmentStrings(const InvocationSpec& spec) {
  std::vector<std::string> env;
  for (const auto& [key, value] : handlerEnvironment(spec)) env.push_back(key + "=" + value);
  return env;
}

std::vector<std::string> warmEnvironment(const InvocationSpec& spec, bool app_env) {
  InvocationSpec bare = spec;
  if (spec.language == Language::kExec || !app_env) bare.app_env.clear();
  std::vector<std::string> env;
  for (std::string& var : handlerEnvironmentStrings(bare)) {
    if (var.rfind("RELAY_", 0) != 0) env.push_back(std::move(var));
  }
  return env;
}

std::string handoverInput(const InvocationSpec& spec, const std::string& app_root) {
  std::string input =
      encodeHandover({handlerCommand(spec, app_root), handlerEnvironmentStrings(spec)});
  input.append(spec.input);
  return input;
}

bool readAtInterpreterStart(Language language, std::string_view key) {
  if (language == Language::kExec) return false;
  // What the dynamic loader, libc and the locale read when any process starts.
  for (const std::string_view prefix : {"LD_", "LC_", "MALLOC_"}) {
    if (key.starts_with(prefix)) return true;
  }
  for (const std::string_view name : {"LANG", "LANGUAGE", "TZ", "GCONV_PATH", "GLIBC_TUNABLES",
                                      "LOCPATH", "NLSPATH", "HOSTALIASES", "RES_OPTIONS"}) {
    if (key == name) return true;
  }
  if (language == Language::kPython3) {
    // PYTHONPATH is applied at hand-over (kPythonWarmBootstrap); the rest only at start.
    return key.starts_with("PYTHON") && key != "PYTHONPATH";
  }
  return key.starts_with("NODE_") || key.starts_with("UV_") || key == "OPENSSL_CONF" ||
         key == "SSL_CERT_FILE" || key == "SSL_CERT_DIR";
}

bool prewarmable(const InvocationSpec& spec) {
  for (const auto& [key, value] : spec.app_env) {
    if (readAtInterpreterStart(spec.language, key)) return false;
  }
  return true;
}

const char* pythonBootstrap() { return kPythonBootstrap; }
const char* nodeBootstrap() { return kNodeBootstrap; }

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
