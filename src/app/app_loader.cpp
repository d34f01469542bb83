#include "app/app_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "app/names.h"
#include "app/template_errors.h"
#include "app/template_parser.h"
#include "app/yaml_document.h"
#include "common/unique_fd.h"

namespace relay::app {
namespace {

std::optional<std::string> readTemplate(const std::filesystem::path& file, TemplateErrors& errors) {
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    errors.add(1, 1, std::string("cannot read template.yaml: ") + std::strerror(errno));
    return std::nullopt;
  }
  std::string text;
  char buffer[8192];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      errors.add(1, 1, std::string("cannot read template.yaml: ") + std::strerror(errno));
      return std::nullopt;
    }
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxTemplateBytes) {
      errors.add(1, 1,
                 "template.yaml is larger than " + std::to_string(kMaxTemplateBytes >> 10) +
                     " KiB; a template that big is not a template");
      return std::nullopt;
    }
  }
}

// A template reached through a symlink must stay inside the app directory: the sandbox mounts
// only that directory, and an app must not read another app's (or the host's) files.
bool checkSymlink(const std::filesystem::path& dir, const std::filesystem::path& file,
                  TemplateErrors& errors) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(file, ec))) return true;
  const std::filesystem::path target = std::filesystem::read_symlink(file, ec);
  const std::filesystem::path resolved = std::filesystem::canonical(file, ec);
  if (ec) {
    errors.add(1, 1, "template.yaml is a symlink to " + target.string() + ", which does not exist");
    return false;
  }
  const std::filesystem::path root = std::filesystem::canonical(dir, ec);
  const std::filesystem::path relative = resolved.lexically_relative(root);
  if (ec || relative.empty() || *relative.begin() == "..") {
    errors.add(
        1, 1, "template.yaml is a symlink to " + resolved.string() + ", outside the app directory");
    return false;
  }
  return true;
}

void parseText(const std::string& name, const std::filesystem::path& dir, const std::string& text,
               TemplateErrors& errors, LoadResult& result) {
  if (const auto root = parseYamlDocument(text, errors)) {
    if (checkYamlKeys(*root, errors)) {
      ParsedTemplate parsed = parseTemplate(*root, name, dir, errors);
      result.runtime = parsed.runtime;
      if (parsed.app && errors.empty()) {
        result.app = std::make_shared<const App>(std::move(*parsed.app));
        result.text = text;
      }
    }
  }
}

}  // namespace

LoadResult loadApp(const std::string& name, const std::filesystem::path& dir) {
  TemplateErrors errors(dir / kTemplateFileName);
  LoadResult result;
  if (!isValidName(name)) {
    errors.add(
        1, 1,
        "app name \"" + name + "\" (the directory name) must match " + std::string(kNamePattern));
  }
  if (checkSymlink(dir, errors.file(), errors)) {
    std::error_code ec;
    if (std::filesystem::is_directory(errors.file(), ec)) {
      errors.add(1, 1, "template.yaml is a directory, not a file");
    } else if (const auto text = readTemplate(errors.file(), errors)) {
      parseText(name, dir, *text, errors, result);
    }
  }
  result.errors = errors.take();
  return result;
}

LoadResult loadAppText(const std::string& name, const std::filesystem::path& dir,
                       const std::string& text, const std::string& origin) {
  TemplateErrors errors(origin);
  LoadResult result;
  if (!isValidName(name)) {
    errors.add(1, 1, "app name \"" + name + "\" must match " + std::string(kNamePattern));
  }
  parseText(name, dir, text, errors, result);
  result.errors = errors.take();
  return result;
}

}  // namespace relay::app
