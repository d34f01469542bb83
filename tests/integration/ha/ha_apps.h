#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "fakes/temp_dir.h"

namespace relay::testing {

/// An apps root for end-to-end Redis tests: app `ha` whose exec handler `bin/record.sh` appends
/// "RELAY_INVOCATION_ID <event>" to a file for every run, `bin/fail.sh` (events with
/// "fail":true, retries 0: straight to the DLQ) and, when asked, a schedule firing every minute.
class HaApps {
 public:
  explicit HaApps(bool with_schedule = false) {
    std::string yaml = R"(runtime: exec
events:
  - handler: bin/record.sh
    pattern: {kind: [ha]}
  - handler: bin/fail.sh
    pattern: {kind: [ha], fail: [true]}
    retries: 0
)";
    if (with_schedule) {
      yaml += R"(schedules:
  - name: every-minute
    cron: "* * * * *"
    handler: bin/record.sh
)";
    }
    apps_.write("ha/template.yaml", yaml);
    apps_.write(
        "ha/bin/record.sh",
        "#!/bin/sh\nprintf '%s %s\\n' \"$RELAY_INVOCATION_ID\" \"$(cat | tr -d '\\n')\" >> " +
            runs().string() + "\n",
        0755);
    apps_.write("ha/bin/fail.sh", "#!/bin/sh\ncat >/dev/null\nexit 3\n", 0755);
  }

  std::string root() const { return apps_.path().string(); }
  std::filesystem::path runs() const { return records_.path() / "runs.log"; }

  /// Every recorded run, one line each.
  std::vector<std::string> lines() const {
    std::ifstream in(runs());
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  /// How many runs saw an event whose JSON holds `"n":N`, by N.
  std::map<int, int> runsByEventNumber() const {
    std::map<int, int> runs;
    for (const std::string& line : lines()) {
      const size_t at = line.find("\"n\":");
      if (at != std::string::npos) ++runs[std::stoi(line.substr(at + 4))];
    }
    return runs;
  }

 private:
  TempDir apps_;
  TempDir records_;  // outside the apps root, which the worker watches
};

}  // namespace relay::testing
