#include "common/thread_name.h"

#include <pthread.h>

#include <utility>

namespace relay {

void nameThisThread(std::string_view name) {
  constexpr std::size_t kKernelLimit = 15;  // TASK_COMM_LEN less its terminating zero
  const std::string cut(name.substr(0, kKernelLimit));
  ::pthread_setname_np(::pthread_self(), cut.c_str());  // best effort: only a label
}

std::thread namedThread(std::string name, std::function<void()> body) {
  return std::thread([name = std::move(name), body = std::move(body)] {
    nameThisThread(name);
    body();
  });
}

}  // namespace relay
