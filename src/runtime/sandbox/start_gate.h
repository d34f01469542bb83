#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/runtime.h"

namespace relay::runtime {

/// Tells a sandbox's own start-up from its handler (docs/runtimes.md "Set-up failures"). The
/// sandbox's first program (relay-launcher, or a warm interpreter's bootstrap) writes to the
/// status descriptor (kStatusFd) `started` once it runs the handed command, or `refused: <why>`
/// when it will not; bwrap and pasta write nothing there. Until `started` the sandbox's output is
/// its own (bwrap's, pasta's, the launcher's): held back here, and the reason of the Error when
/// the handler never starts. On `started` the handler's sink is told (OutputSink::started()),
/// then gets what was held and, from then on, every line. Used from the supervising thread only.
class StartGate final : public OutputSink {
 public:
  /// `prefix` is the handler's output prefix, left out of the failure text.
  StartGate(OutputSink& handler, std::string_view prefix);

  void line(std::string_view prefixed_line) override;
  /// Feeds what the status descriptor delivered.
  void status(std::string_view bytes);

  /// Whether the handler started.
  bool opened() const { return opened_; }
  /// Why the handler never started: the refusal, else what the sandbox printed (without the
  /// prefix, joined by "; "), else "".
  std::string failure() const;

 private:
  OutputSink& handler_;
  std::string prefix_;
  bool opened_ = false;
  std::string pending_;  // an incomplete status line
  std::string refusal_;
  std::vector<std::string> held_;
  std::size_t held_bytes_ = 0;
};

}  // namespace relay::runtime
