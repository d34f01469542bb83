#include "cli/print_sink.h"

#include "common/printable.h"

namespace relay::cli {

void PrintSink::line(std::string_view prefixed_line) {
  // Control characters escaped: the handler's output must not drive the terminal.
  out_ << printable(prefixed_line, KeepControls::kTab) << '\n' << std::flush;
}

}  // namespace relay::cli
