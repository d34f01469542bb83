#include "common/thread_name.h"

#include <pthread.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace relay {
namespace {

std::string nameOfThisThread() {
  char name[32] = {};
  EXPECT_EQ(::pthread_getname_np(::pthread_self(), name, sizeof name), 0);
  return name;
}

TEST(ThreadName, NamesTheCallingThreadOnly) {
  const std::string before = nameOfThisThread();
  std::string named;
  std::thread([&] {
    nameThisThread("relay-reader");
    named = nameOfThisThread();
  }).join();
  EXPECT_EQ(named, "relay-reader");
  EXPECT_EQ(nameOfThisThread(), before);
}

TEST(ThreadName, ANameLongerThanTheKernelKeepsIsCutNotRefused) {
  std::string named;
  std::thread([&] {
    nameThisThread("relay-a-name-longer-than-fifteen");
    named = nameOfThisThread();
  }).join();
  EXPECT_EQ(named, "relay-a-name-lo");
}

}  // namespace
}  // namespace relay
