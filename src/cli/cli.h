#pragma once

#include <ostream>

namespace relay::cli {

/// Parses argv and runs the chosen command; returns the process exit code (0, 1 or 2).
/// Blocks for as long as the command runs (`relay start` until it is stopped).
int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace relay::cli
