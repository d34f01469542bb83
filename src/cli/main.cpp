#include <iostream>

#include "cli/cli.h"
#include "runtime/init_process.h"

int main(int argc, char** argv) {
  relay::runtime::becomeInitIfPid1();  // a container's init: stays PID 1 and reaps orphans
  return relay::cli::runCli(argc, argv, std::cout, std::cerr);
}
