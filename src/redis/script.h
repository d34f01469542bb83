#pragma once

#include <string>

namespace relay::redis {

/// A Lua script and its SHA-1, so Connection::eval() can send EVALSHA and only ship the
/// source when the server answers NOSCRIPT (after a restart or SCRIPT FLUSH). Immutable;
/// build each one once (e.g. as a member) and share it freely across threads.
class Script {
 public:
  explicit Script(std::string source);

  const std::string& source() const { return source_; }
  /// 40 lowercase hex digits, as SCRIPT LOAD returns.
  const std::string& sha1() const { return sha1_; }

 private:
  std::string source_;
  std::string sha1_;
};

}  // namespace relay::redis
