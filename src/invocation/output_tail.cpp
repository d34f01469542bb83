#include "invocation/output_tail.h"

#include "invocation/retry_after.h"

namespace relay::invocation {

void OutputTail::line(std::string_view prefixed_line) {
  logger_.handlerOutput(prefixed_line);
  if (!retry_after_prefix_.empty() && prefixed_line.starts_with(retry_after_prefix_)) {
    if (auto delay = parseRetryAfter(prefixed_line.substr(retry_after_prefix_.size()))) {
      retry_after_ = delay;
    }
  }
  lines_.emplace_back(prefixed_line.size() > limit_
                          ? prefixed_line.substr(prefixed_line.size() - limit_)
                          : prefixed_line);
  bytes_ += lines_.back().size() + 1;
  while (bytes_ > limit_ + 1 && lines_.size() > 1) {
    bytes_ -= lines_.front().size() + 1;
    lines_.pop_front();
  }
}

std::string OutputTail::text() const {
  std::string joined;
  for (const std::string& kept : lines_) {
    if (!joined.empty()) joined += '\n';
    joined += kept;
  }
  if (joined.size() > limit_) joined.erase(0, joined.size() - limit_);
  return joined;
}

void OutputTail::started() {
  if (started_) return;
  started_ = true;
  if (on_started_) on_started_();
}

}  // namespace relay::invocation
