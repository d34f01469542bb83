// Hostile producers: events built to make the rule and the handler read different things, or
// to break a bootstrap, published to the stream the real `relay start` reads.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "integration/hostile/hostile_fixture.h"

namespace relay::testing {
namespace {

// Every string of a reply, nested arrays included, joined by newlines.
void flatten(const redis::ReplyView& reply, std::string& out) {
  if (reply.isArray()) {
    const auto elements = reply.elements();
    for (const redis::ReplyView& element : *elements) flatten(element, out);
  } else if (auto text = reply.string(); text.ok()) {
    out.append(*text).append("\n");
  }
}

// The handler of the node app: prints what `n` became, then DONE cold|prewarmed as hostile.py
// does.
constexpr const char* kNodeHandler = R"JS(
import fs from "fs";
export function number_digits(event) {
  console.log("PARSED " + typeof event.n + " " + JSON.stringify(Object.keys(event)));
  const cold = fs.readFileSync("/proc/self/environ", "latin1").includes("RELAY_MESSAGE_ID=");
  console.log("DONE " + (cold ? "cold" : "prewarmed"));
}
)JS";

/// A memory cgroup of the test's own (v1 `memory.limit_in_bytes`, v2 `memory.max`) that a
/// process joins before it execs: `relay start` runs under a real memory limit, its sandboxes
/// inside it too. Removed (emptied) by the destructor.
class MemoryLimit {
 public:
  static std::unique_ptr<MemoryLimit> create(std::uint64_t bytes) {
    auto limit = std::unique_ptr<MemoryLimit>(new MemoryLimit());
    std::ifstream self("/proc/self/cgroup");
    std::string line, v1, v2;
    while (std::getline(self, line)) {
      if (line.find(":memory:") != std::string::npos) v1 = line.substr(line.rfind(':') + 1);
      if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
    }
    const std::string name = "relay-hostile-memory-" + std::to_string(::getpid());
    if (std::filesystem::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") && !v1.empty()) {
      limit->dir_ = std::filesystem::path("/sys/fs/cgroup/memory" + v1) / name;
      limit->limit_file_ = "memory.limit_in_bytes";
      limit->oom_file_ = "memory.oom_control";
    } else if (!v2.empty()) {
      // A sibling of the test's cgroup: v2 has no processes in a cgroup that has children.
      limit->dir_ = std::filesystem::path("/sys/fs/cgroup" + v2).parent_path() / name;
      limit->limit_file_ = "memory.max";
      limit->oom_file_ = "memory.events";
    } else {
      return nullptr;
    }
    std::error_code ec;
    std::filesystem::create_directories(limit->dir_, ec);
    std::ofstream(limit->dir_ / limit->limit_file_) << bytes;
    if (limit->limit_file_ == "memory.limit_in_bytes" &&
        std::filesystem::exists(limit->dir_ / "memory.memsw.limit_in_bytes")) {
      std::ofstream(limit->dir_ / "memory.memsw.limit_in_bytes") << bytes;
    }
    if (ec || read(limit->dir_ / limit->limit_file_).find(std::to_string(bytes)) != 0) {
      return nullptr;
    }
    return limit;
  }
  ~MemoryLimit() {
    for (int i = 0; i < 100 && ::rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i) {
      std::istringstream procs(read(dir_ / "cgroup.procs"));
      for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  /// A wrapper for startRelay(): joins the cgroup, then execs the rest.
  std::vector<std::string> wrapper() const {
    return {"/bin/sh", "-c", "echo $$ > " + (dir_ / "cgroup.procs").string() + " && exec \"$@\"",
            "sh"};
  }
  /// How many processes the kernel killed for memory in the cgroup.
  long oomKills() const {
    std::istringstream events(read(dir_ / oom_file_));
    std::string key;
    long value = 0;
    while (events >> key >> value) {
      if (key == "oom_kill") return value;
    }
    return -1;
  }

 private:
  MemoryLimit() = default;
  static std::string read(const std::filesystem::path& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::path dir_;
  std::string limit_file_;
  std::string oom_file_;
};

// docs/operations.md "Memory": a producer's 100 MB events are dead-lettered as oversized by a
// worker that never holds one whole, under a memory limit far below their size, and every other
// event is still handled.
TEST_F(HostileHandler, HugeEventsAreDeadLetteredUnderAMemoryLimitAndNothingElseIsLost) {
  constexpr std::uint64_t kLimit = 192ull << 20;
  auto limit = MemoryLimit::create(kLimit);
  ASSERT_NE(limit, nullptr) << "cannot make a memory cgroup (needs root and cgroup v1 memory or "
                               "v2 with the memory controller)";
  addApp("sink", {"fds"});
  startRelay({}, limit->wrapper());
  auto redis = connect();
  ASSERT_NE(redis, nullptr);
  const std::string huge = R"({"attempt":"fds","pad":")" + std::string(100u << 20, 'x') + R"("})";
  int normal = 0;
  for (int round = 0; round < 4; ++round) {
    ASSERT_TRUE(redis->command({"XADD", "events", "*", "event", R"({"attempt":"fds"})"}).ok());
    ++normal;
    ASSERT_TRUE(redis->command({"XADD", "events", "*", "event", huge, "other", "kept"}).ok());
  }
  ASSERT_TRUE(redis->command({"XADD", "events", "*", "event", R"({"attempt":"fds"})"}).ok());
  ++normal;
  std::string dlq;
  const bool settled = SpawnedProcess::waitUntil(
      [&] {
        auto entries = redis->command({"XRANGE", "relay:events:dlq", "-", "+"});
        auto pending = redis->command({"XPENDING", "events", "relay"});
        if (!entries.ok() || entries->size() < 4 || !pending.ok()) return false;
        dlq.clear();
        flatten(*entries, dlq);
        const auto left = pending->at(0)->integer();
        return count(log(), "[sink/hostile.fds] DONE ") >= static_cast<std::size_t>(normal) &&
               left.ok() && *left == 0;
      },
      std::chrono::seconds(120));
  EXPECT_TRUE(settled) << log().substr(0, 20000);
  EXPECT_TRUE(relayRunning()) << "the worker died: " << log().substr(0, 20000);
  // For the record (docs/operations.md "Memory"): the worker's peak resident size.
  std::ifstream status("/proc/" + std::to_string(relayPid()) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) RecordProperty("relay_peak_rss", line.substr(6));
  }
  EXPECT_EQ(limit->oomKills(), 0);
  const std::string size = std::to_string(huge.size());
  EXPECT_EQ(count(dlq, "oversized: event is " + size + " bytes, over MAX_EVENT_BYTES"), 4u)
      << dlq.substr(0, 4000);
  // Each entry keeps the event's first bytes and its size, never the event.
  EXPECT_EQ(count(dlq, R"({"attempt":"fds","pad":"xxx)"), 4u) << dlq.substr(0, 4000);
  EXPECT_EQ(count(dlq, "... (" + size + " bytes, truncated)"), 4u);
  EXPECT_LT(dlq.size(), 64u * 1024);
  EXPECT_EQ(count(log(), "[sink/hostile.fds] DONE "), static_cast<std::size_t>(normal));
}

TEST_F(HostileHandler, ARepeatedKeyIsMalformedAndNeverReachesAHandler) {
  addApp("hostile", {"fds"});
  startRelay();
  auto redis = connect();
  ASSERT_NE(redis, nullptr);
  // The rule matches `attempt: [fds]`; a handler's JSON library would read the last "role".
  for (const std::string event :
       {R"({"attempt":"fds","role":"user","amount":1,"role":"admin","amount":1000000000})",
        R"({"attempt":"fds","role":"user","r\u006fle":"admin"})",
        R"({"attempt":"other","attempt":"fds"})"}) {
    ASSERT_TRUE(redis->command({"XADD", "events", "*", "event", event}).ok());
  }
  std::string dlq;
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        auto entries = redis->command({"XRANGE", "relay:events:dlq", "-", "+"});
        if (!entries.ok() || entries->size() < 3) return false;
        dlq.clear();
        flatten(*entries, dlq);
        return true;
      },
      std::chrono::seconds(30)))
      << log();
  EXPECT_EQ(count(dlq, "malformed: duplicate key \"role\""), 2u) << dlq;
  EXPECT_EQ(count(dlq, "malformed: duplicate key \"attempt\""), 1u) << dlq;
  EXPECT_EQ(count(log(), "[hostile/hostile.fds]"), 0u) << log();
}

TEST_F(HostileHandler, TheBootstrapsParseIntegersOfAnyLengthRelayAccepts) {
  // Python refuses int() of more than 4300 digits by default; Relay accepts them.
  const std::string digits(5000, '7');
  addApp("hostile", {"number_digits"});
  addApp("hostile-node", {"number_digits"}, "", {{"hostile.mjs", kNodeHandler}}, "node");
  startRelay();
  const std::string event = R"({"attempt":"number_digits","n":)" + digits + "}";
  const auto python = attempt("hostile", "number_digits", event);
  // Every run (attempt() makes sure one was prewarmed) parsed it exactly.
  EXPECT_EQ(count(joined(python), "EXACT int 777777777 16610\n"), count(joined(python), "DONE "))
      << joined(python);
  EXPECT_GE(count(joined(python), "EXACT "), 1u) << joined(python);
  (void)attempt("hostile-node", "number_digits", event);
  // The node app matches the python attempts' events too, and its run of one of them may still
  // be going when attempt() sees a DONE: wait until every run that parsed has finished.
  const std::string prefix = "[hostile-node/hostile.number_digits] ";
  std::string text;
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        text = log();
        return count(text, prefix + "DONE ") >= count(text, prefix + "PARSED ");
      },
      std::chrono::seconds(30)));
  // node reads a number as a double (this one as Infinity): parsed, the member is there.
  EXPECT_EQ(count(text, prefix + R"(PARSED number ["attempt","n"])"), count(text, prefix + "DONE "))
      << text;
  EXPECT_GE(count(text, prefix + "PARSED "), 1u) << text;
}

}  // namespace
}  // namespace relay::testing
