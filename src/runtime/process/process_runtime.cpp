#include "runtime/process/process_runtime.h"

#include <filesystem>
#include <utility>

#include "runtime/child_process.h"
#include "runtime/handler_command.h"
#include "runtime/handler_resolver.h"

namespace relay::runtime {

ProcessRuntime::ProcessRuntime(Clock& clock, std::string search_path)
    : clock_(clock), search_path_(std::move(search_path)) {}

Availability ProcessRuntime::availability(const InvocationSpec& app_spec) const {
  std::error_code ec;
  if (!std::filesystem::is_directory(app_spec.app_dir, ec)) {
    return {false, "app directory " + app_spec.app_dir.string() + " does not exist"};
  }
  if (auto file = resolveHandler(app_spec.language, app_spec.app_dir, app_spec.handler); !file.ok())
    return {false, file.error().message};
  if (app_spec.language != Language::kExec) {
    const char* interpreter = languageName(app_spec.language);
    if (!findExecutable(interpreter, search_path_)) {
      return {false, std::string(interpreter) + " not found on " + search_path_};
    }
  }
  return {};
}

Result<Outcome> ProcessRuntime::run(const InvocationSpec& spec, OutputSink& output) {
  const Availability available = availability(spec);
  if (!available.available) return Error::unavailable(available.reason);
  const std::string app_root = std::filesystem::absolute(spec.app_dir).lexically_normal().string();
  LaunchOptions options;
  options.argv = handlerCommand(spec, app_root);
  const auto executable = findExecutable(options.argv[0], search_path_);
  if (!executable) return Error::unavailable(options.argv[0] + " not found");
  options.executable = *executable;
  for (const auto& [key, value] : handlerEnvironment(spec))
    options.env.push_back(key + "=" + value);
  options.cwd = app_root;

  const MonoTime start = clock_.monotonicNow();
  auto child = ChildProcess::spawn(options);
  if (!child.ok()) {
    // The file exists (checked above), so an exec that fails (bad format, bad interpreter
    // line) is the handler's fault: a failed attempt, not an unavailable backend.
    if (spec.language != Language::kExec) return child.error();
    output.started();
    Outcome outcome;
    outcome.reason = child.error().message;
    return outcome;
  }
  output.started();
  const std::string prefix = outputPrefix(spec);
  LineSplitter out(prefix, output);
  LineSplitter err(prefix, output);
  ChildProcess& process = **child;
  auto termination = process.supervise(
      spec.input, out, err, clock_, spec.timeout,
      [&process](int signal) { process.signalGroup(signal); }, nullptr, spec.cancel);
  if (!termination.ok()) return termination.error();
  return outcomeOf(*termination, spec.timeout, clock_.monotonicNow() - start);
}

}  // namespace relay::runtime
