#include "common/thread_name.h"

#include <pthread.h>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <thread>

namespace relay {
namespace {

std::string nameOfThisThread() {
  char name[32] = {};
  EXPECT_EQ(::pthread_getname_np(::pthread_self(), name, sizeof name), 0);
  return name;
}

// The name a new thread has after it called nameThisThread(name).
std::string nameTakenByAThreadNamed(std::string_view name) {
  std::string taken;
  std::thread([&] {
    nameThisThread(name);
    taken = nameOfThisThread();
  }).join();
  return taken;
}

TEST(ThreadName, NamesTheCallingThreadOnly) {
  const std::string before = nameOfThisThread();
  EXPECT_EQ(nameTakenByAThreadNamed("relay-reader"), "relay-reader");
  EXPECT_EQ(nameOfThisThread(), before);
}

TEST(ThreadName, ANameLongerThanTheKernelKeepsIsCutNotRefused) {
  EXPECT_EQ(nameTakenByAThreadNamed("relay-a-name-longer-than-fifteen"), "relay-a-name-lo");
}

}  // namespace
}  // namespace relay
