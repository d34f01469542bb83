#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace relay::runtime {

/// What a prewarmed sandbox learns at hand-over (docs/runtimes.md "Prewarmed sandboxes"): the
/// handler's argv and its complete environment, exactly what a cold start would exec.
struct Handover {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on the env's PATH
  std::vector<std::string> env;   // KEY=VALUE
};

/// The bytes written to a prewarmed sandbox's stdin before the event:
/// `RELAY-HANDOVER 1 <argc> <envc> <bytes>\n`, then <bytes> bytes of NUL-terminated strings
/// (argv, then env). Nothing follows but the event, then EOF.
std::string encodeHandover(const Handover& handover);

/// The sizes of a header line (without its newline); kInvalidArgument when it is not one.
struct HandoverHeader {
  std::size_t argc = 0;
  std::size_t envc = 0;
  std::size_t bytes = 0;
};
Result<HandoverHeader> decodeHandoverHeader(std::string_view line);

/// The strings of a payload of `header.bytes` bytes; kInvalidArgument when the counts do not
/// match or argv is empty.
Result<Handover> decodeHandoverPayload(const HandoverHeader& header, std::string_view payload);

/// The descriptor on which a sandbox's first program (relay-launcher, a warm interpreter's
/// bootstrap) reports to Relay (docs/runtimes.md "Set-up failures"): kStartedReport once it runs
/// the handed command (nothing else of it ran before), or kRefusedReport and why, on one line,
/// when it will not. Nothing else is written there; the handler never has it open.
inline constexpr int kStatusFd = 4;
inline constexpr std::string_view kStartedReport = "started\n";
inline constexpr std::string_view kRefusedReport = "refused: ";

/// Where a prewarmed sandbox or container sees relay-launcher (bound read-only; docs/runtimes.md
/// "Prewarmed sandboxes").
inline constexpr const char* kLauncherMount = "/run/relay-launcher";

/// The longest header line a reader needs to accept.
inline constexpr std::size_t kMaxHandoverHeader = 96;
/// The largest payload a reader accepts (argv + environment).
inline constexpr std::size_t kMaxHandoverPayload = 4 << 20;

}  // namespace relay::runtime
