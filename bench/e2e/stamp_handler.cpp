// The handler of the end-to-end benchmark (bench/e2e): a static executable that needs nothing
// from the image or sandbox it runs in. First thing, it reads CLOCK_REALTIME (shared by every
// namespace and container on the host) and prints
//
//   relay-stamp <RELAY_MESSAGE_ID> <nanoseconds since the epoch>
//
// on stdout, which the worker forwards to its log, where the benchmark reads it. Environment:
// BENCH_QUIET=1 prints nothing (throughput cases), BENCH_SLEEP_MS=N sleeps N ms before exiting
// (a backlog that stays in hand).
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const char* quiet = std::getenv("BENCH_QUIET");
  if (quiet == nullptr || std::strcmp(quiet, "1") != 0) {
    const char* id = std::getenv("RELAY_MESSAGE_ID");
    std::printf("relay-stamp %s %lld\n", id != nullptr ? id : "-",
                static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec);
    std::fflush(stdout);
  }
  if (const char* sleep_ms = std::getenv("BENCH_SLEEP_MS")) {
    const long ms = std::atol(sleep_ms);
    const timespec pause{ms / 1000, (ms % 1000) * 1'000'000L};
    ::nanosleep(&pause, nullptr);
  }
  return 0;
}
