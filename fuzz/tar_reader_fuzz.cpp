// libFuzzer target: TarReader (src/runtime/image/tar_reader.h) on arbitrary bytes, the archive
// format of every image layer and Docker image export (docs/runtimes.md "Image roots"). The
// input is fed whole and again split at sizes the input picks; both must see the same members
// with the same data, each member's data exactly its size, and every member ended. A violation
// aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/image/tar_reader.h"

namespace {

using relay::runtime::image::TarEntry;

struct Member {
  TarEntry entry;
  std::string data;
  bool ended = false;
};

class Recorder final : public relay::runtime::image::TarVisitor {
 public:
  relay::Status entry(const TarEntry& entry) override {
    if (!members.empty() && !members.back().ended) std::abort();  // ended before the next
    members.push_back({entry, {}, false});
    return {};
  }
  relay::Status data(std::string_view bytes) override {
    if (members.empty() || members.back().ended || bytes.empty()) std::abort();
    members.back().data.append(bytes);
    if (members.back().data.size() > members.back().entry.size) std::abort();
    return {};
  }
  relay::Status end() override {
    if (members.empty() || members.back().ended) std::abort();
    if (members.back().data.size() != members.back().entry.size) std::abort();
    members.back().ended = true;
    return {};
  }
  std::vector<Member> members;
};

struct Outcome {
  bool fed = false;
  bool finished = false;
  std::vector<Member> members;
};

Outcome read(std::string_view input, std::size_t step) {
  Recorder recorder;
  relay::runtime::image::TarReader reader(recorder);
  Outcome outcome;
  outcome.fed = true;
  for (std::size_t at = 0; at < input.size(); at += step) {
    if (!reader.feed(input.substr(at, step)).ok()) {
      outcome.fed = false;
      break;
    }
  }
  outcome.finished = outcome.fed && reader.finish().ok();
  outcome.members = std::move(recorder.members);
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const Outcome whole = read(input, input.empty() ? 1 : input.size());
  const std::size_t step = 1 + (size > 0 ? data[size / 2] % 97 : 0);
  const Outcome split = read(input, step);
  if (whole.fed != split.fed || whole.finished != split.finished ||
      whole.members.size() != split.members.size()) {
    std::abort();
  }
  for (std::size_t i = 0; i < whole.members.size(); ++i) {
    const Member& a = whole.members[i];
    const Member& b = split.members[i];
    if (a.entry.path != b.entry.path || a.entry.link != b.entry.link ||
        a.entry.type != b.entry.type || a.entry.size != b.entry.size || a.data != b.data) {
      std::abort();
    }
  }
  // A finished archive ended every member.
  if (whole.finished) {
    for (const Member& member : whole.members) {
      if (!member.ended) std::abort();
    }
  }
  return 0;
}
