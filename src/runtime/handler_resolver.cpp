#include "runtime/handler_resolver.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/split.h"
#include "common/unique_fd.h"

namespace relay::runtime {
namespace {

bool hasControlCharacter(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// Whether `relative` resolves beneath `app_dir` without leaving it, checked by the kernel in
// one walk (openat2 RESOLVE_BENEATH, Linux 5.6+): false also when the kernel cannot say (an
// absolute symlink, no openat2), and then the caller compares canonical paths instead.
bool resolvesBeneath(const std::filesystem::path& app_dir, const std::filesystem::path& relative) {
  const UniqueFd dir(::open(app_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return false;
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const UniqueFd file(
      static_cast<int>(::syscall(SYS_openat2, dir.get(), relative.c_str(), &how, sizeof how)));
  return file.valid();
}

// Where `file` (`app_dir` / `relative`) really lives, if it stays inside `app_dir`; both are
// resolved through symlinks. The common case (no symlink leaving the directory) costs one
// kernel walk; otherwise both paths are made canonical (a readlink per component) and compared.
bool staysInside(const std::filesystem::path& app_dir, const std::filesystem::path& relative,
                 const std::filesystem::path& file, std::filesystem::path& resolved) {
  if (resolvesBeneath(app_dir, relative)) return true;
  std::error_code ec;
  const std::filesystem::path root = std::filesystem::canonical(app_dir, ec);
  if (ec) return false;
  resolved = std::filesystem::canonical(file, ec);
  if (ec) return false;
  const std::filesystem::path from_root = resolved.lexically_relative(root);
  return !from_root.empty() && *from_root.begin() != "..";
}

}  // namespace

bool isIdentifier(std::string_view name, bool allow_dollar) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = isLetter(c) || c == '_' || (allow_dollar && c == '$');
    if (!letter && (i == 0 || !isDigit(c))) return false;
  }
  return true;
}

Status checkHandlerName(Language language, std::string_view handler) {
  if (handler.empty()) return Error::invalid("handler must not be empty");
  if (hasControlCharacter(handler)) {
    return Error::invalid("handler must not contain control characters");
  }
  if (language == Language::kExec) {
    if (handler.front() == '/') {
      return Error::invalid(
          "expected a path relative to the app directory (e.g. bin/handler.sh)"
          ", got the absolute path " +
          quoted(handler));
    }
    for (const std::string_view part : split(handler, '/')) {
      if (part.empty() || part == "." || part == "..") {
        return Error::invalid(
            "expected a plain relative path inside the app directory (no empty, \".\" or "
            "\"..\" parts), got " +
            quoted(handler));
      }
    }
    return {};
  }
  const std::vector<std::string_view> parts = split(handler, '.');
  bool identifiers = parts.size() >= 2;
  for (const std::string_view part : parts) {
    identifiers = identifiers && isIdentifier(part, /*allow_dollar=*/language == Language::kNode);
  }
  if (!identifiers) {
    return Error::invalid(
        "expected module.function for runtime " + std::string(languageName(language)) +
        " (dot-separated identifiers, e.g. handlers.users.on_insert), got " + quoted(handler));
  }
  return {};
}

std::vector<std::filesystem::path> handlerCandidates(Language language, std::string_view handler) {
  if (language == Language::kExec) return {std::filesystem::path(handler)};
  const std::size_t last_dot = handler.rfind('.');
  std::string module(handler.substr(0, last_dot));
  for (char& c : module) {
    if (c == '.') c = '/';
  }
  if (language == Language::kPython3) return {module + ".py"};
  return {module + ".mjs", module + "/index.mjs", module + ".js", module + "/index.js",
          module + ".cjs"};
}

Result<HandlerTarget> resolveHandler(Language language, const std::filesystem::path& app_dir,
                                     std::string_view handler) {
  if (Status syntax = checkHandlerName(language, handler); !syntax) return syntax.error();
  const std::vector<std::filesystem::path> candidates = handlerCandidates(language, handler);
  for (const std::filesystem::path& candidate : candidates) {
    const std::filesystem::path full = app_dir / candidate;
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(full, ec);
    if (!std::filesystem::exists(status)) continue;
    std::filesystem::path resolved;
    if (!staysInside(app_dir, candidate, full, resolved)) {
      return Error::invalid(candidate.string() + " resolves outside the app directory" +
                            (resolved.empty() ? "" : " (to " + resolved.string() + ")"));
    }
    if (!std::filesystem::is_regular_file(status)) {
      return Error::invalid(candidate.string() + " is not a regular file");
    }
    if (language == Language::kExec) {
      const auto perms = status.permissions();
      constexpr auto kAnyExec = std::filesystem::perms::owner_exec |
                                std::filesystem::perms::group_exec |
                                std::filesystem::perms::others_exec;
      if ((perms & kAnyExec) == std::filesystem::perms::none) {
        return Error::invalid(candidate.string() + " is not executable (chmod +x " +
                              candidate.string() + ")");
      }
      return HandlerTarget{candidate, ""};
    }
    return HandlerTarget{candidate, std::string(handler.substr(handler.rfind('.') + 1))};
  }
  if (candidates.size() == 1) {
    return Error::notFound(language == Language::kExec
                               ? candidates.front().string() +
                                     " does not exist in the app directory"
                               : quoted(handler) + " needs " + candidates.front().string() +
                                     ", which does not exist in the app directory");
  }
  std::string names;
  for (const std::filesystem::path& candidate : candidates) {
    names += (names.empty() ? "" : ", ") + candidate.string();
  }
  return Error::notFound(quoted(handler) + " needs one of " + names +
                         "; none exists in the app directory");
}

}  // namespace relay::runtime
