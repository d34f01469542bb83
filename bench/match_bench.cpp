// match_bench: compiles pattern sets, streams a JSON-lines data set through decode + RuleIndex
// (what the worker does per message), checks the number of matches against each set's
// `# total:` header, then reports the cost per event. Several --patterns share one run, so
// every ratio is against baselines measured by the same process on the same data.
//
//   match_bench --events cities.geojsonl.gz --patterns a.yaml [--patterns b.yaml ...]
//               [--min-time 1.0]
//
// Times are thread CPU time (other processes on a shared machine do not inflate them); each
// figure is the median over passes of the whole data set.
#include <yaml-cpp/yaml.h>
#include <zlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/compiler.h"
#include "pattern/rule_index.h"

namespace {

using relay::pattern::Pattern;

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct PatternSet {
  std::string path;
  std::string name;
  std::vector<std::shared_ptr<const Pattern>> rules;
  std::optional<std::uint64_t> total;  // `# total: N`
  std::vector<std::uint64_t> counts;   // `# counts: [a, b, ...]`, may be absent
};

std::optional<PatternSet> loadPatterns(const std::string& path) {
  PatternSet set;
  set.path = path;
  set.name = path.substr(path.find_last_of('/') + 1);
  if (set.name.size() > 5 && set.name.ends_with(".yaml")) set.name.resize(set.name.size() - 5);
  std::ifstream file(path);
  if (!file) {
    std::cerr << path << ": cannot open\n";
    return std::nullopt;
  }
  std::stringstream text;
  text << file.rdbuf();
  std::istringstream lines(text.str());
  const std::regex total_line(R"(^#\s*total:\s*(\d+)\s*$)");
  const std::regex counts_line(R"(^#\s*counts:\s*\[([0-9,\s]*)\]\s*$)");
  for (std::string line; std::getline(lines, line) && line.starts_with("#");) {
    std::smatch match;
    if (std::regex_match(line, match, total_line)) set.total = std::stoull(match[1]);
    if (std::regex_match(line, match, counts_line)) {
      std::istringstream numbers(match[1].str());
      for (std::string number; std::getline(numbers, number, ',');) {
        set.counts.push_back(std::stoull(number));
      }
    }
  }
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& error) {
    std::cerr << path << ": " << error.what() << "\n";
    return std::nullopt;
  }
  if (!root.IsSequence()) {
    std::cerr << path << ": expected a YAML list of {name, pattern}\n";
    return std::nullopt;
  }
  bool ok = true;
  for (const YAML::Node& entry : root) {
    relay::pattern::CompileResult result = relay::pattern::compile(entry["pattern"]);
    if (auto* errors = std::get_if<std::vector<relay::pattern::CompileError>>(&result)) {
      for (const auto& error : *errors) {
        std::cerr << path << ":" << error.line << ":" << error.column << ": " << error.path << ": "
                  << error.message << "\n";
      }
      ok = false;
      continue;
    }
    set.rules.push_back(std::get<std::shared_ptr<const Pattern>>(std::move(result)));
  }
  if (!ok) return std::nullopt;
  return set;
}

std::optional<std::vector<std::string>> loadEvents(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files too
  if (file == nullptr) {
    std::cerr << path << ": cannot open\n";
    return std::nullopt;
  }
  std::vector<std::string> events;
  std::string current;
  std::vector<char> buffer(1 << 16);
  int read;
  while ((read = gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) {
    for (int i = 0; i < read; ++i) {
      if (buffer[i] != '\n') {
        current += buffer[i];
        continue;
      }
      if (!current.empty()) events.push_back(std::move(current));
      current.clear();
    }
  }
  const bool failed = read < 0;
  gzclose(file);
  if (failed) {
    std::cerr << path << ": read error\n";
    return std::nullopt;
  }
  if (!current.empty()) events.push_back(std::move(current));
  for (std::string& event : events) event.reserve(event.size() + relay::event::kDecodePadding);
  return events;
}

// Runs `pass` (one sweep over all events) until `min_time` CPU seconds have passed; returns the
// median seconds per pass.
template <typename Pass>
double medianPass(double min_time, Pass&& pass) {
  std::vector<double> times;
  const double start = threadCpuSeconds();
  do {
    const double before = threadCpuSeconds();
    pass();
    times.push_back(threadCpuSeconds() - before);
  } while (threadCpuSeconds() - start < min_time || times.size() < 3);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Matcher benchmark: decode + classify a JSON-lines data set", "match_bench"};
  std::string events_path;
  std::vector<std::string> pattern_paths;
  double min_time = 1.0;
  bool tsv = false;
  app.add_option("--events", events_path, "JSON lines, optionally gzip-compressed")->required();
  app.add_option("--patterns", pattern_paths, "YAML list of {name, pattern}; repeatable")
      ->required();
  app.add_option("--min-time", min_time, "CPU seconds per measurement (default 1)");
  app.add_flag("--tsv", tsv,
               "tab-separated rows (data, set, rules, indexed, exact, scanned, matches, "
               "ns/event, decode ns/event) for scripts/bench-match");
  CLI11_PARSE(app, argc, argv);

  std::vector<PatternSet> sets;
  for (const std::string& path : pattern_paths) {
    std::optional<PatternSet> set = loadPatterns(path);
    if (!set) return 2;
    sets.push_back(std::move(*set));
  }
  std::optional<std::vector<std::string>> loaded = loadEvents(events_path);
  if (!loaded) return 2;
  std::vector<std::string>& events = *loaded;
  const relay::Instant now = *relay::parseRfc3339("2026-01-01T00:00:00Z");
  const double count = static_cast<double>(events.size());

  // Check every set's answer before timing anything: a fast wrong answer is no answer.
  bool correct = true;
  std::vector<relay::pattern::RuleIndex> indexes;
  for (const PatternSet& set : sets) {
    indexes.emplace_back(set.rules);
    std::vector<std::uint64_t> counts(set.rules.size(), 0);
    std::uint64_t total = 0;
    std::vector<std::uint32_t> matched;
    for (std::string& raw : events) {
      relay::Result<relay::event::Event> event = relay::event::decode(std::move(raw));
      if (!event) {
        std::cerr << events_path << ": " << event.error().message << "\n";
        return 2;
      }
      matched.clear();
      indexes.back().match(*event, now, matched);
      for (const std::uint32_t rule : matched) ++counts[rule];
      total += matched.size();
      raw = std::move(*event).takeRaw();
    }
    if (set.total && *set.total != total) {
      std::cerr << set.path << ": WRONG total: " << total << " matches, the header says "
                << *set.total << "\n";
      correct = false;
    }
    if (!set.counts.empty() && set.counts != counts) {
      std::cerr << set.path << ": WRONG counts per rule:";
      for (const std::uint64_t c : counts) std::cerr << " " << c;
      std::cerr << "\n";
      correct = false;
    }
    if (!set.total) std::cerr << set.path << ": no # total: header; " << total << " matches\n";
  }
  if (!correct) return 1;

  // Baselines: taking ownership of the bytes (the loop overhead) and decoding alone.
  std::size_t sink = 0;
  const double loop_time = medianPass(min_time, [&] {
    for (std::string& raw : events) {
      std::string owned = std::move(raw);
      sink += owned.size();
      raw = std::move(owned);
    }
  });
  const double decode_time = medianPass(min_time, [&] {
    for (std::string& raw : events) {
      relay::Result<relay::event::Event> event = relay::event::decode(std::move(raw));
      sink += event->root().size();
      raw = std::move(*event).takeRaw();
    }
  });
  const double decode_ns = decode_time / count * 1e9;
  const std::string data_name = events_path.substr(events_path.find_last_of('/') + 1);
  if (!tsv) {
    std::printf("data: %s, %zu events; loop %.1f ns/event; decode only %.1f ns/event\n",
                events_path.c_str(), events.size(), loop_time / count * 1e9, decode_ns);
    std::printf("%-26s %6s %7s %6s %7s %9s %12s %11s %9s\n", "set", "rules", "indexed", "exact",
                "scanned", "matches", "ns/event", "events/s", "x decode");
  }
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const relay::pattern::RuleIndex& index = indexes[s];
    std::vector<std::uint32_t> matched;
    std::uint64_t total = 0;
    const double time = medianPass(min_time, [&] {
      total = 0;
      for (std::string& raw : events) {
        relay::Result<relay::event::Event> event = relay::event::decode(std::move(raw));
        matched.clear();
        index.match(*event, now, matched);
        total += matched.size();
        raw = std::move(*event).takeRaw();
      }
    });
    const relay::pattern::RuleIndex::Stats stats = index.stats();
    const double ns = time / count * 1e9;
    if (tsv) {
      std::printf("%s\t%s\t%zu\t%zu\t%zu\t%zu\t%llu\t%.1f\t%.1f\n", data_name.c_str(),
                  sets[s].name.c_str(), stats.rules, stats.indexed, stats.exact, stats.scanned,
                  static_cast<unsigned long long>(total), ns, decode_ns);
    } else {
      std::printf("%-26s %6zu %7zu %6zu %7zu %9llu %12.1f %11.0f %9.2f\n", sets[s].name.c_str(),
                  stats.rules, stats.indexed, stats.exact, stats.scanned,
                  static_cast<unsigned long long>(total), ns, 1e9 / ns, ns / decode_ns);
    }
  }
  // Printing `sink` keeps the baseline loops from being optimised away.
  std::printf(tsv ? "# checksum %zu\n" : "(checksum %zu)\n", sink);
  return 0;
}
