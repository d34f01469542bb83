// libFuzzer target: pattern::compile() on arbitrary YAML. It must never throw or crash; every
// error names a position and says something; a compiled pattern renders (toString) to YAML
// that compiles back to the same rendering.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pattern/compiler.h"
#include "pattern/pattern.h"

namespace {

relay::pattern::CompileResult compileText(const std::string& text, bool& parsed) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception&) {
    parsed = false;
    return std::vector<relay::pattern::CompileError>{};
  }
  parsed = true;
  return relay::pattern::compile(node);  // noexcept in practice: a throw aborts the fuzzer
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;  // deep YAML nesting recurses inside yaml-cpp itself
  const std::string text(reinterpret_cast<const char*>(data), size);
  bool parsed = false;
  relay::pattern::CompileResult result = compileText(text, parsed);
  if (!parsed) return 0;
  if (const auto* errors = std::get_if<std::vector<relay::pattern::CompileError>>(&result)) {
    if (errors->empty()) std::abort();  // a failure always says why
    for (const auto& error : *errors) {
      if (error.message.empty() || error.line < 0 || error.column < 0) std::abort();
    }
    return 0;
  }
  const std::string rendered =
      std::get<std::shared_ptr<const relay::pattern::Pattern>>(result)->toString();
  relay::pattern::CompileResult again = compileText(rendered, parsed);
  const auto* pattern = std::get_if<std::shared_ptr<const relay::pattern::Pattern>>(&again);
  if (!parsed || pattern == nullptr || (*pattern)->toString() != rendered) std::abort();
  return 0;
}
