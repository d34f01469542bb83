#include "worker/systemd_notifier.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fakes/temp_dir.h"

namespace relay::worker {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

TEST(SystemdNotifier, SendsOneDatagramPerStateToAPathOrAnAbstractSocket) {
  testing::TempDir dir;
  for (const std::string& name :
       {(dir.path() / "notify").string(), "@relay-notify-test-" + std::to_string(::getpid())}) {
    const int listener = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    name.copy(address.sun_path, sizeof address.sun_path - 1);
    socklen_t length = offsetof(sockaddr_un, sun_path) + name.size() + 1;
    if (name[0] == '@') {
      address.sun_path[0] = '\0';
      --length;
    }
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0) << name;
    auto notifier = SystemdNotifier::create({name, std::nullopt});
    ASSERT_TRUE(notifier.ok());
    EXPECT_TRUE((*notifier)->send("READY=1\nSTATUS=hello"));
    char buffer[64] = {};
    EXPECT_EQ(::recv(listener, buffer, sizeof buffer, 0), 20) << name;
    EXPECT_STREQ(buffer, "READY=1\nSTATUS=hello");
    ::close(listener);
  }
}

TEST(ReaderAlive, TurnedWithinTheWindowOrWaitingForRoom) {
  const auto now = std::chrono::steady_clock::time_point(seconds(100));
  EXPECT_TRUE(readerAlive(now, now - seconds(5), false, seconds(10)));
  EXPECT_FALSE(readerAlive(now, now - seconds(11), false, seconds(10)));
  EXPECT_TRUE(readerAlive(now, now - seconds(600), true, seconds(10)));
}

}  // namespace
}  // namespace relay::worker
