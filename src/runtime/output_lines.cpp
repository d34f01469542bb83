#include "runtime/output_lines.h"

#include <utility>

namespace relay::runtime {

LineSplitter::LineSplitter(std::string prefix, OutputSink& sink)
    : prefix_(std::move(prefix)), sink_(sink) {}

void LineSplitter::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::size_t room = kMaxLineBytes - pending_.size();
    if (newline != std::string_view::npos && newline <= room) {
      pending_.append(bytes.substr(0, newline));
      emit(pending_);
      pending_.clear();
      bytes.remove_prefix(newline + 1);
    } else if (bytes.size() < room) {
      pending_.append(bytes);
      return;
    } else {
      // The line is longer than the cap: emit what fits and keep going with the rest.
      pending_.append(bytes.substr(0, room));
      emit(pending_);
      pending_.clear();
      bytes.remove_prefix(room);
    }
  }
}

void LineSplitter::finish() {
  if (!pending_.empty()) {
    emit(pending_);
    pending_.clear();
  }
}

void LineSplitter::emit(std::string_view line) {
  scratch_.assign(prefix_);
  scratch_.append(line);
  sink_.line(scratch_);
}

std::string outputPrefix(const InvocationSpec& spec) {
  return "[" + spec.app + "/" + spec.handler + "] ";
}

}  // namespace relay::runtime
