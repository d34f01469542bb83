#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace relay::runtime {

/// How the program finds a call's rule: a binary tree over the call numbers (libseccomp 2.5+),
/// or libseccomp's default, one comparison after another. Both decide every call alike; the
/// tree is shorter to run, and the kernel runs the whole program for every call number of every
/// ABI when it installs it (docs/runtimes.md "seccomp filter").
enum class SeccompLayout { kBinaryTree, kLinear };

/// When a rule's call is denied.
enum class SeccompCondition {
  kAlways,
  /// Its flags argument has a CLONE_NEW* namespace flag (clone, unshare).
  kNamespaceFlag,
  /// Its first argument, a socket family, is none of AF_UNIX, AF_INET, AF_INET6, AF_NETLINK.
  kOtherSocketFamily,
};

/// One system call the sandbox's seccomp filter denies.
struct SeccompRule {
  std::string_view syscall;
  int error;  // the errno the call fails with (EPERM; ENOSYS for clone3...)
  SeccompCondition condition = SeccompCondition::kAlways;
};

/// The seccomp BPF program every sandboxed handler runs under (docs/runtimes.md "seccomp"),
/// built once with libseccomp for the native architecture plus its compat ABIs (x86 and x32
/// on x86_64, arm on aarch64); calls of any other ABI kill the process. Denied calls fail
/// with an errno rather than killing, so a handler sees an ordinary error. Immutable after
/// build(): thread-safe.
class SeccompFilter {
 public:
  /// Every denied call, in the order documented.
  static const std::vector<SeccompRule>& rules();

  /// Builds the program, as a binary tree unless `layout` asks for the linear one or this
  /// libseccomp cannot build a tree (then linear: layout() tells which). kUnavailable with
  /// libseccomp's reason when a rule cannot be built (a libseccomp too old to know a call): the
  /// sandbox then runs nothing rather than run unfiltered.
  static Result<SeccompFilter> build(SeccompLayout layout = SeccompLayout::kBinaryTree);

  /// The raw program (an array of struct sock_filter), as bwrap --seccomp reads it.
  const std::string& program() const { return program_; }
  /// The layout the program was built with.
  SeccompLayout layout() const { return layout_; }

  /// A fresh descriptor positioned at the start of the program (a memfd, close-on-exec), for
  /// one bwrap --seccomp FD: bwrap reads it to the end, so each invocation needs its own.
  /// Does not block.
  Result<UniqueFd> openProgram() const;

 private:
  SeccompFilter(std::string program, SeccompLayout layout)
      : program_(std::move(program)), layout_(layout) {}
  std::string program_;
  SeccompLayout layout_;
};

}  // namespace relay::runtime
