#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "app/app_loader.h"
#include "fakes/temp_dir.h"

namespace relay::app::testing {

/// A temporary apps root with helpers to write apps into it.
class AppsRoot {
 public:
  const std::filesystem::path& path() const { return dir_.path(); }
  std::filesystem::path appDir(const std::string& app) const { return dir_.path() / app; }
  std::filesystem::path templatePath(const std::string& app) const {
    return appDir(app) / "template.yaml";
  }

  /// Writes `app`/template.yaml.
  void writeTemplate(const std::string& app, std::string_view text) const {
    dir_.write(app + "/template.yaml", text);
  }
  /// Writes a file inside `app` (an executable one with mode 0755).
  void writeFile(const std::string& app, const std::string& relative, std::string_view text,
                 mode_t mode = 0644) const {
    dir_.write(app + "/" + relative, text, mode);
  }
  /// A valid exec app with one rule whose handler is bin/h.sh; `concurrency` tells versions apart.
  void writeExecApp(const std::string& app, int concurrency = 4) const {
    writeFile(app, "bin/h.sh", "#!/bin/sh\necho hi\n", 0755);
    writeTemplate(app,
                  "runtime: exec\nconcurrency: " + std::to_string(concurrency) +
                      "\nevents:\n  - handler: bin/h.sh\n    pattern: {table_name: [users]}\n");
  }

  LoadResult load(const std::string& app) const { return loadApp(app, appDir(app)); }

 private:
  relay::testing::TempDir dir_;
};

/// The diagnostics as strings.
inline std::vector<std::string> errorStrings(const LoadResult& result) {
  std::vector<std::string> out;
  for (const Diagnostic& diagnostic : result.errors) out.push_back(diagnostic.toString());
  return out;
}

/// `file` + ":" + each of `located` (which start with LINE:COL).
inline std::vector<std::string> at(const std::filesystem::path& file,
                                   const std::vector<std::string>& located) {
  std::vector<std::string> out;
  for (const std::string& text : located) out.push_back(file.string() + ":" + text);
  return out;
}

}  // namespace relay::app::testing
