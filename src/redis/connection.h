#pragma once

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/c_free.h"
#include "redis/endpoint.h"
#include "redis/errors.h"
#include "redis/reply.h"
#include "redis/script.h"

// See reply.h for why hiredict is declared rather than included.
struct redictContext;
extern "C" void redictFree(redictContext* context);

namespace relay::redis {

/// Timeouts of one Connection.
struct ConnectionSettings {
  /// Bound on establishing the TCP/unix connection (AUTH and SELECT count as commands).
  /// Zero: as long as the operating system takes.
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(5);
  /// Bound on each blocking socket read or write of a command. Zero: wait forever. Must be
  /// longer than any server-side block the caller asks for (XREADGROUP BLOCK, BLPOP).
  std::chrono::milliseconds command_timeout = std::chrono::seconds(10);
};

/// One blocking connection to Redis (a hiredict context it owns).
///
/// NOT thread-safe: use one Connection per thread, or guard it with a mutex.
/// Every call blocks the calling thread for at most the command timeout per socket operation.
/// Any failure other than a Redis error reply (I/O, timeout, EOF, protocol) leaves the
/// connection broken: ok() turns false and every later call fails fast with kClosed. There is
/// no automatic reconnect - the caller decides (back off, then create() a new Connection).
class Connection {
 public:
  /// Connects, then sends AUTH (when the endpoint has a user or password) and SELECT (when
  /// db != 0). Fails with kIo/kTimeout when the server cannot be reached and with kReply when
  /// AUTH or SELECT is refused (e.g. WRONGPASS).
  static Result<std::unique_ptr<Connection>> create(const Endpoint& endpoint,
                                                    ConnectionSettings settings = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// False once an I/O, timeout, EOF or protocol error has broken the connection.
  bool ok() const { return !broken_; }
  const Endpoint& endpoint() const { return endpoint_; }

  /// Sends one command (each argument binary-safe) and waits for its reply. A Redis error
  /// reply comes back as an Error of kind kReply (test it with isReplyError()); nested error
  /// elements of an array reply stay inside the Reply (ReplyView::isError()).
  Result<Reply> command(std::initializer_list<std::string_view> args);
  Result<Reply> command(const std::vector<std::string>& args);
  Result<Reply> command(std::span<const std::string_view> args);

  /// Queues a command in the output buffer without sending it; getReply() flushes the buffer
  /// and reads replies in order. Each appendCommand() needs exactly one getReply().
  Status appendCommand(std::initializer_list<std::string_view> args);
  Status appendCommand(const std::vector<std::string>& args);
  Status appendCommand(std::span<const std::string_view> args);
  /// The reply to the oldest appended command; error replies as kReply, like command().
  Result<Reply> getReply();
  /// Number of appended commands whose reply has not been read yet.
  size_t pendingReplies() const { return pending_; }

  /// Sends all commands in one round trip. The outer Result fails (and the connection breaks)
  /// on I/O errors; each inner Result holds one command's reply or its kReply error.
  Result<std::vector<Result<Reply>>> pipeline(
      const std::vector<std::vector<std::string>>& commands);

  /// Runs `script` with EVALSHA; on NOSCRIPT (server restarted or SCRIPT FLUSH) sends the
  /// source with EVAL, which also caches it for the next EVALSHA.
  Result<Reply> eval(const Script& script, const std::vector<std::string>& keys,
                     const std::vector<std::string>& args);

  /// Changes the per-operation command timeout (zero: wait forever).
  Status setCommandTimeout(std::chrono::milliseconds timeout);

 private:
  Connection(Endpoint endpoint, CHandle<redictContext, redictFree> context);

  Status usable() const;
  Result<Reply> send(const char** argv, const size_t* lengths, size_t count);
  Status append(const char** argv, const size_t* lengths, size_t count);
  // Marks the connection broken by the hiredict error just seen and returns it.
  Error fail(int saved_errno);

  Endpoint endpoint_;
  std::string where_;  // endpoint_.describe(), prefixed to I/O error messages
  CHandle<redictContext, redictFree> context_;
  size_t pending_ = 0;
  bool broken_ = false;
  std::string broken_reason_;
};

}  // namespace relay::redis
