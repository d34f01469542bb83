#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "runtime/runtime.h"

namespace relay::runtime {

/// The file implementing a handler, and the function in it (docs/runtimes.md "Contract").
struct HandlerTarget {
  std::filesystem::path file;  // relative to the app directory
  std::string function;        // empty for exec, which runs the file itself
};

/// Whether `name` is an ASCII identifier `[A-Za-z_][A-Za-z0-9_]*` (a handler module part; also
/// the charset of environment variable names); with `allow_dollar`, `$` is a letter too
/// (JavaScript).
bool isIdentifier(std::string_view name, bool allow_dollar = false);

/// Checks a handler name's syntax for the runtime without touching the disk: exec takes a plain
/// relative path (no absolute path, no `..`, `.` or empty parts); python3 and node take
/// `module.path.function` (dot-separated identifiers, at least two).
Status checkHandlerName(Language language, std::string_view handler);

/// The files that may implement a syntactically valid handler, in lookup order: exec the path
/// itself, python3 `a/b.py`, node `a/b.mjs`, `a/b/index.mjs`, `a/b.js`, `a/b/index.js`,
/// `a/b.cjs`. Relative to the app directory.
std::vector<std::filesystem::path> handlerCandidates(Language language, std::string_view handler);

/// Finds the first candidate present in `app_dir` as a regular file that stays inside the app
/// directory after resolving symlinks (the sandbox mounts only the app directory), and for exec
/// has an execute bit (whoever runs Relay: the backends run handlers as another user). The one
/// resolution both template validation and every backend's availability use. kNotFound when
/// none exists; kInvalidArgument for a bad name or a file that exists but cannot serve. Reads
/// the file system; does not open the file.
Result<HandlerTarget> resolveHandler(Language language, const std::filesystem::path& app_dir,
                                     std::string_view handler);

}  // namespace relay::runtime
