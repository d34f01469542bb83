#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/runtime.h"

namespace relay::runtime {

/// Turns a handler's byte stream into prefixed lines for an OutputSink, with bounded memory:
/// a line longer than kMaxLineBytes is emitted in pieces. Not thread-safe: one per stream.
class LineSplitter {
 public:
  static constexpr std::size_t kMaxLineBytes = 64 * 1024;

  /// `prefix` is `[<app>/<handler>] `; it is prepended to every line, verbatim bytes follow.
  LineSplitter(std::string prefix, OutputSink& sink);

  void feed(std::string_view bytes);
  /// Emits a trailing partial line (output that did not end in a newline).
  void finish();

 private:
  void emit(std::string_view line);

  std::string prefix_;
  OutputSink& sink_;
  std::string pending_;  // bytes of the current line after the prefix, < kMaxLineBytes
  std::string scratch_;
};

/// `[<app>/<handler>] `
std::string outputPrefix(const InvocationSpec& spec);

}  // namespace relay::runtime
