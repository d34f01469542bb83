#pragma once

#include <ostream>
#include <string_view>

#include "runtime/runtime.h"

namespace relay::cli {

/// Writes handler output, already prefixed by the runtime, to a command's stdout (`app invoke`,
/// `dlq replay`), one flushed line at a time so a user watching sees each line as the handler
/// prints it, control characters but tab escaped so the handler cannot drive the terminal.
/// Not thread-safe: one invocation at a time.
class PrintSink final : public runtime::OutputSink {
 public:
  explicit PrintSink(std::ostream& out) : out_(out) {}
  void line(std::string_view prefixed_line) override;

 private:
  std::ostream& out_;
};

}  // namespace relay::cli
