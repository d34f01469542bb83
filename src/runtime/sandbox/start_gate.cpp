#include "runtime/sandbox/start_gate.h"

#include "runtime/handover.h"

namespace relay::runtime {
namespace {

// Bwrap's and pasta's own messages are a few lines; a sandbox that prints more before its
// handler starts is cut, not buffered without bound.
constexpr std::size_t kMaxHeldBytes = 16 * 1024;
constexpr std::string_view kStarted = kStartedReport.substr(0, kStartedReport.size() - 1);

}  // namespace

StartGate::StartGate(OutputSink& handler, std::string_view prefix)
    : handler_(handler), prefix_(prefix) {}

void StartGate::line(std::string_view prefixed_line) {
  if (opened_) {
    handler_.line(prefixed_line);
    return;
  }
  if (held_bytes_ + prefixed_line.size() > kMaxHeldBytes) return;
  held_bytes_ += prefixed_line.size();
  held_.emplace_back(prefixed_line);
}

void StartGate::status(std::string_view bytes) {
  pending_.append(bytes);
  for (std::size_t end = pending_.find('\n'); end != std::string::npos; end = pending_.find('\n')) {
    const std::string report = pending_.substr(0, end);
    pending_.erase(0, end + 1);
    if (report == kStarted && !opened_) {
      opened_ = true;
      handler_.started();
      for (const std::string& held : held_) handler_.line(held);
      held_.clear();
    } else if (report.rfind(kRefusedReport, 0) == 0 && !opened_) {
      refusal_ = report.substr(kRefusedReport.size());
    }
  }
  if (pending_.size() > kMaxHeldBytes) pending_.clear();  // no line: not a report
}

std::string StartGate::failure() const {
  if (!refusal_.empty()) return refusal_;
  std::string printed;
  for (const std::string& held : held_) {
    const std::string_view text =
        std::string_view(held).substr(held.rfind(prefix_, 0) == 0 ? prefix_.size() : 0);
    if (text.empty()) continue;
    if (!printed.empty()) printed += "; ";
    printed.append(text);
  }
  return printed;
}

}  // namespace relay::runtime
