// libFuzzer target: the matcher on a (pattern, event) pair. The input is the pattern's YAML,
// a NUL byte, then the event's JSON. When both are valid, the RuleIndex over the pattern, a
// fixed decoy rule and the pattern again must agree with the reference evaluator on every one
// of those rules, and so must explain() (a mismatch aborts), whatever the cut-off instant. The
// decoy is an ordinary rule: an event may match it too, and then the index must say so.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/compiler.h"
#include "pattern/evaluator.h"
#include "pattern/explain.h"
#include "pattern/rule_index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;
  const char* text = reinterpret_cast<const char*>(data);
  const char* nul = static_cast<const char*>(std::memchr(text, '\0', size));
  if (nul == nullptr) return 0;
  const std::string pattern_text(text, nul);
  std::string event_text(nul + 1, text + size);
  if (pattern_text.size() > 2048) return 0;

  YAML::Node node;
  try {
    node = YAML::Load(pattern_text);
  } catch (const YAML::Exception&) {
    return 0;
  }
  relay::pattern::CompileResult compiled = relay::pattern::compile(node);
  const auto* pattern = std::get_if<std::shared_ptr<const relay::pattern::Pattern>>(&compiled);
  if (pattern == nullptr) return 0;
  relay::Result<relay::event::Event> event = relay::event::decode(std::move(event_text));
  if (!event.ok()) return 0;

  const auto decoy = std::make_shared<const relay::pattern::Pattern>(
      std::vector<relay::pattern::Field>{{"__absent__", {relay::pattern::Exists{true}}}});
  const std::vector<std::shared_ptr<const relay::pattern::Pattern>> rules = {*pattern, decoy,
                                                                             *pattern};
  const relay::pattern::RuleIndex index(rules);
  for (const char* now : {"2026-01-01T10:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
    const relay::Instant instant = *relay::parseRfc3339(now);
    std::vector<std::uint32_t> want;
    for (std::uint32_t rule = 0; rule < rules.size(); ++rule) {
      const bool matched = relay::pattern::matches(*rules[rule], *event, instant);
      if (relay::pattern::explain(*rules[rule], *event, instant).matched != matched) std::abort();
      if (matched) want.push_back(rule);
    }
    std::vector<std::uint32_t> got;
    index.match(*event, instant, got);
    if (got != want) std::abort();
  }
  return 0;
}
