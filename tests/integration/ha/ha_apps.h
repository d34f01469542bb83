#pragma once

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fakes/temp_dir.h"

namespace relay::testing {

/// An apps root for end-to-end Redis tests: app `ha` whose exec handler `bin/record.sh` appends
/// "RELAY_INVOCATION_ID <event>" to a file for every run (timeout 5s: a claim whose outcome a
/// failover lost expires within seconds), `bin/fail.sh` (events with
/// "fail":true, retries 0: straight to the DLQ; succeeds when `relay dlq replay` runs it),
/// `bin/flaky.sh` (events with "flaky":true: fails its first attempt, retries 1) and, when asked,
/// a schedule firing every minute. record.sh's rule has flow gates that never bite (a key limit
/// of 1,000, a throttle with a burst of 100,000), so every run also goes through flow control's
/// Redis keys and commands (ACL, Sentinel, Cluster).
class HaApps {
 public:
  explicit HaApps(bool with_schedule = false) {
    std::string yaml = R"(runtime: exec
events:
  - handler: bin/record.sh
    pattern: {kind: [ha]}
    timeout: 5s
    concurrency: {limit: 1000, key: n}
    throttle: {limit: 1000, period: 1s, burst: 100000}
  - handler: bin/fail.sh
    pattern: {kind: [ha], fail: [true]}
    retries: 0
  - handler: bin/flaky.sh
    pattern: {kind: [ha], flaky: [true]}
    retries: 1
)";
    if (with_schedule) {
      yaml += R"(schedules:
  - name: every-minute
    cron: "* * * * *"
    handler: bin/record.sh
)";
    }
    apps_.write("ha/template.yaml", yaml);
    // Every handler first notes which attempt of which invocation started (the audit of
    // ChaosRun: charged attempts against started ones).
    const std::string started =
        "printf '%s %s\\n' \"$RELAY_INVOCATION_ID\" \"$RELAY_ATTEMPT\" >> " +
        attemptsLog().string() + "\n";
    apps_.write("ha/bin/record.sh",
                "#!/bin/sh\n" + started +
                    "printf '%s %s\\n' \"$RELAY_INVOCATION_ID\" \"$(cat | tr -d "
                    "'\\n')\" >> " +
                    runs().string() + "\n",
                0755);
    apps_.write("ha/bin/fail.sh",
                "#!/bin/sh\n" + started +
                    "cat >/dev/null\n[ \"$RELAY_TRIGGER\" = replay ] && exit 0\nexit 3\n",
                0755);
    apps_.write("ha/bin/flaky.sh",
                "#!/bin/sh\n" + started +
                    "cat >/dev/null\necho \"flaky attempt $RELAY_ATTEMPT\" >> " + runs().string() +
                    ".flaky\n[ \"$RELAY_ATTEMPT\" -ge 2 ]\n",
                0755);
  }

  std::string root() const { return apps_.path().string(); }
  /// The environment of a worker (or a CLI command) named `consumer` on the stream {events} of
  /// `uri`, running these apps on the process runtime, its HTTP endpoints on a free port.
  std::vector<std::string> env(const std::string& uri, const std::string& consumer = "ha") const {
    return {"REDIS_URI=" + uri,      "REDIS_STREAM={events}",       "RELAY_APPS=" + root(),
            "RELAY_RUNTIME=process", "RELAY_HTTP_ADDR=127.0.0.1:0", "RELAY_CONSUMER=" + consumer};
  }
  std::filesystem::path runs() const { return records_.path() / "runs.log"; }
  /// One line per run of bin/flaky.sh: "flaky attempt N".
  std::vector<std::string> flakyAttempts() const { return read(runs().string() + ".flaky"); }

  /// Every recorded run, one line each.
  std::vector<std::string> lines() const { return read(runs()); }
  std::filesystem::path attemptsLog() const { return records_.path() / "attempts.log"; }
  /// The attempts that really started, per RELAY_INVOCATION_ID (every handler notes them).
  std::map<std::string, std::set<int>> startedAttempts() const {
    std::map<std::string, std::set<int>> started;
    for (const std::string& line : read(attemptsLog())) {
      const size_t space = line.rfind(' ');
      if (space == std::string::npos) continue;
      started[line.substr(0, space)].insert(std::stoi(line.substr(space + 1)));
    }
    return started;
  }

  /// How the runs of bin/record.sh cover the events {"kind":"ha","n":N} for N = 1..count.
  struct Coverage {
    std::vector<int> missing;  // events no run saw: lost
    int runs = 0;              // runs of the events 1..count
    int messages = 0;          // distinct stream entries they ran for
    int redelivered = 0;       // runs beyond the first for one stream entry (at least once)
    int resent = 0;            // stream entries beyond the first for one event (the producer
                               // sent it again after a failure left the first XADD unknown)
  };
  Coverage coverage(int count) const {
    std::map<int, std::map<std::string, int>> runs;  // n -> message id -> runs
    for (const std::string& line : lines()) {
      const size_t at = line.find("\"n\":");
      if (at == std::string::npos) continue;
      // RELAY_INVOCATION_ID is <message-id>/<app>/<handler>.
      ++runs[std::stoi(line.substr(at + 4))][line.substr(0, line.find('/'))];
    }
    Coverage coverage;
    for (int n = 1; n <= count; ++n) {
      const auto found = runs.find(n);
      if (found == runs.end()) {
        coverage.missing.push_back(n);
        continue;
      }
      coverage.resent += static_cast<int>(found->second.size()) - 1;
      for (const auto& [id, times] : found->second) {
        ++coverage.messages;
        coverage.runs += times;
        coverage.redelivered += times - 1;
      }
    }
    return coverage;
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
  static std::vector<std::string> read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  TempDir apps_;
  TempDir records_;  // outside the apps root, which the worker watches
};

}  // namespace relay::testing
