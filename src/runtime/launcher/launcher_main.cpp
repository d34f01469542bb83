// relay-launcher: the first program of every sandbox that runs an exec handler (docs/runtimes.md
// "Prewarmed sandboxes", "Set-up failures"). bwrap starts it, ahead of demand or for the
// invocation at hand; it waits on stdin for the hand-over (the handler's argv and complete
// environment, src/runtime/handover.h), reports `started` on the status descriptor, then leaves
// only stdin, stdout and stderr open and execs the handler, whose stdin is the rest of the pipe:
// the event, then EOF. A hand-over it cannot take is refused on the status descriptor (and on
// stderr), exit 127, before anything of the handler's ran: Relay then knows the handler never
// started. Without a hand-over (stdin closed: the sandbox was dropped unused) it exits 0.
//
// `relay-launcher --egress <policy> <program> <args>...` is its other use: the step between
// pasta and bwrap of a `network: true` sandbox (docs/runtimes.md "network: true"). It
// installs the egress filter (src/runtime/sandbox/egress_filter.h) in pasta's network
// namespace, where it still has the capabilities to, then execs bwrap with everything else
// (environment, descriptors: the seccomp program and the status descriptor) unchanged; a
// policy it cannot install is refused like a hand-over, before anything of the handler ran.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/child_setup.h"
#include "runtime/egress_policy.h"
#include "runtime/handover.h"
#include "runtime/launcher/native_setup.h"
#include "runtime/sandbox/egress_filter.h"

namespace {

using namespace relay::runtime;

// Reads exactly `size` bytes; false on EOF or error first.
bool readExactly(std::string& into, std::size_t size) {
  into.resize(size);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(0, into.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

// The header line, read a byte at a time so nothing of the event is consumed. Empty at EOF.
std::string readHeaderLine() {
  std::string line;
  char c = 0;
  while (line.size() <= kMaxHandoverHeader) {
    const ssize_t n = ::read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line.push_back(c);
  }
  return line;
}

// argv[0] as execve needs it: itself when it has a slash, else the first executable match on
// the PATH of the handler's environment (what bwrap's execvp does on a cold start).
std::string resolve(const std::string& name, const std::vector<std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& var : env) {
    if (var.rfind("PATH=", 0) == 0) path = var.substr(5);
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t colon = std::min(path.find(':', start), path.size());
    const std::string dir = path.substr(start, colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return name;
}

// Writes all of `text` to the status descriptor; a sandbox started without one (a probe) has
// nobody to tell.
void report(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(kStatusFd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The handler never started: said on the status descriptor, for Relay, and on stderr.
int refuse(const std::string& message) {
  report(std::string(kRefusedReport) + message + "\n");
  std::fprintf(stderr, "relay-launcher: %s\n", message.c_str());
  return 127;
}

// Installs the policy, then execs the program: a sandbox that cannot be filtered never runs.
int egressStep(int argc, char** argv) {
  if (argc < 4) return refuse("usage: relay-launcher --egress <policy> <program> [args...]");
  auto policy = decodeEgressPolicy(argv[2]);
  if (!policy.ok()) return refuse("egress policy: " + policy.error().message);
  if (auto installed = installEgressFilter(*policy); !installed.ok()) {
    return refuse(installed.error().message);
  }
  ::execv(argv[3], argv + 3);
  return refuse(std::string("cannot execute ") + argv[3] + ": " + std::strerror(errno));
}

// The hand-over: read it, report `started`, exec the handler.
int takeHandover(int /*argc*/, char** /*argv*/) {
  // A stop (SIGTERM: a timeout, a cancel) that comes while the sandbox waits for its hand-over
  // is held until `started` is reported, then taken: it stops the handler as it starts instead
  // of ending the sandbox as if its set-up had failed (docs/runtimes.md "Set-up failures").
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &term, nullptr);
  const std::string line = readHeaderLine();
  if (line.empty()) return 0;
  auto header = decodeHandoverHeader(line);
  if (!header.ok()) return refuse(header.error().message);
  std::string payload;
  if (!readExactly(payload, header->bytes)) return refuse("hand-over cut short");
  auto handover = decodeHandoverPayload(*header, payload);
  if (!handover.ok()) return refuse(handover.error().message);
  std::vector<char*> handed_argv, envp;
  for (std::string& arg : handover->argv) handed_argv.push_back(arg.data());
  handed_argv.push_back(nullptr);
  for (std::string& var : handover->env) envp.push_back(var.data());
  envp.push_back(nullptr);
  const std::string executable = resolve(handover->argv[0], handover->env);
  if (!child_setup::markCloexecFrom(3))
    return refuse(std::string("close-on-exec: ") + std::strerror(errno));
  // From here on it is the handler's: its file failing to execute (a bad interpreter line, not
  // an executable) is its own failure, charged like any exit, so a broken handler ends in the
  // DLQ rather than waiting forever.
  report(kStartedReport);
  ::close(kStatusFd);
  ::sigprocmask(SIG_UNBLOCK, &term, nullptr);  // a held SIGTERM ends it here, after `started`
  ::execve(executable.c_str(), handed_argv.data(), envp.data());
  std::fprintf(stderr, "relay-launcher: cannot execute %s: %s\n", executable.c_str(),
               std::strerror(errno));
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--egress") == 0) return egressStep(argc, argv);
  // The native sandbox (docs/runtimes.md "Native launcher"): Relay starts the launcher as root
  // to build the prepared tree once, then once per sandbox to set it up and drop everything.
  if (argc > 1 && std::strcmp(argv[1], "--native-template") == 0) {
    return native::buildTemplate(argc, argv);
  }
  if (argc > 1 && std::strcmp(argv[1], "--native") == 0) {
    return native::runSandbox(argc, argv, takeHandover);
  }
  if (argc > 1 && std::strcmp(argv[1], "--self-test") == 0) return native::selfTest(argc, argv);
  return takeHandover(argc, argv);
}
