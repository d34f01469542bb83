#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redis/connection_settings.h"
#include "redis/endpoint.h"
#include "redis/errors.h"
#include "redis/reply.h"
#include "redis/reply_filter.h"
#include "redis/script.h"

namespace relay::redis {

class Argv;
class Link;
class TlsContext;
struct LinkOptions;

/// One blocking connection to the Redis master that serves an endpoint: the server itself, the
/// master its sentinels name, or, on a Redis Cluster, the master of the endpoint's slot_key.
///
/// NOT thread-safe: use one Connection per thread, or guard it with a mutex.
/// Every call blocks the calling thread for at most the command timeout per socket operation.
/// Any failure other than a Redis error reply (I/O, timeout, EOF, protocol) leaves the
/// connection broken: ok() turns false and every later call fails fast with kClosed. So do the
/// replies that say this server cannot serve us (READONLY: a replica, e.g. a demoted master;
/// NOAUTH, LOADING, MASTERDOWN, CLUSTERDOWN): the caller creates a new Connection, which finds
/// the master again. A cluster's MOVED is followed in place (the connection moves to the new
/// master) and ASK for one command; the caller never sees either.
class Connection {
 public:
  /// Connects (TLS for rediss://), logs in (HELLO 2 AUTH, or AUTH on servers before 6) and
  /// SELECTs db != 0. For a sentinel endpoint, first asks the sentinels for the master. On a
  /// cluster node, moves to the master of endpoint.slot_key, and refuses a slot_key without a
  /// hash tag with kConfig. Fails with kIo/kTimeout when no server can be reached, kConfig for a
  /// TLS or cluster setup that cannot work, and kReply when the login or SELECT is refused
  /// (WRONGPASS, NOAUTH). Every socket it opens is close-on-exec.
  static Result<std::unique_ptr<Connection>> create(const Endpoint& endpoint,
                                                    ConnectionSettings settings = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// False once an I/O, timeout, EOF or protocol error, or a reply such as READONLY, has
  /// broken the connection.
  bool ok() const;
  const Endpoint& endpoint() const { return endpoint_; }
  /// The server this connection talks to now ("host:port"), e.g. the master sentinels named.
  std::string server() const;
  /// Whether the server is a Redis Cluster node.
  bool cluster() const { return cluster_; }

  /// Sends one command (each argument binary-safe) and waits for its reply. A Redis error
  /// reply comes back as an Error of kind kReply (test it with isReplyError()); nested error
  /// elements of an array reply stay inside the Reply (ReplyView::isError()).
  Result<Reply> command(std::initializer_list<std::string_view> args);
  Result<Reply> command(const std::vector<std::string>& args);
  Result<Reply> command(std::span<const std::string_view> args);
  /// The same with the reply cut to `limits` as it streams in (ReplyFilter: a bulk string
  /// over them arrives as [first bytes, true length], an array of too many elements ends with
  /// its true count): for replies that carry what producers wrote (stream entries), so that
  /// one entry never reaches memory whole.
  Result<Reply> command(std::initializer_list<std::string_view> args, const ReplyLimits& limits);
  Result<Reply> command(const std::vector<std::string>& args, const ReplyLimits& limits);

  /// Queues a command in the output buffer without sending it; getReply() flushes the buffer
  /// and reads replies in order. Each appendCommand() needs exactly one getReply(). Unlike
  /// command() and pipeline(), these two do not follow cluster redirects.
  Status appendCommand(std::initializer_list<std::string_view> args);
  Status appendCommand(const std::vector<std::string>& args);
  Status appendCommand(std::span<const std::string_view> args);
  /// The same, its reply cut to `limits` as command() does.
  Status appendCommand(const std::vector<std::string>& args, const ReplyLimits& limits);
  /// Sends the appended commands now without reading their replies, so the server works on
  /// them while the caller does something else; getReply() reads them later.
  Status flush();
  /// The reply to the oldest appended command; error replies as kReply, like command().
  Result<Reply> getReply();
  /// Number of appended commands whose reply has not been read yet.
  size_t pendingReplies() const;

  /// Sends all commands in one round trip. The outer Result fails (and the connection breaks)
  /// on I/O errors; each inner Result holds one command's reply or its kReply error. Commands
  /// a cluster redirected are sent again, in order, where the redirect says.
  Result<std::vector<Result<Reply>>> pipeline(
      const std::vector<std::vector<std::string>>& commands);
  /// The same, command i's reply cut to limits[i] when it has a value (command()'s limits).
  Result<std::vector<Result<Reply>>> pipeline(
      const std::vector<std::vector<std::string>>& commands,
      const std::vector<std::optional<ReplyLimits>>& limits);

  /// Runs `script` with EVALSHA; on NOSCRIPT (server restarted, failed over, or SCRIPT FLUSH)
  /// sends the source with EVAL, which also caches it for the next EVALSHA.
  Result<Reply> eval(const Script& script, const std::vector<std::string>& keys,
                     const std::vector<std::string>& args, const ReplyLimits* limits = nullptr);

  /// Changes the per-operation command timeout (zero: wait forever).
  Status setCommandTimeout(std::chrono::milliseconds timeout);

  /// Thread-safe, and the only call another thread may make while one uses the connection:
  /// ends the call blocked on it (an XREADGROUP BLOCK) at once, which fails and breaks the
  /// connection, as does every later call (a worker that stops does not wait for the BLOCK).
  /// The caller keeps the connection alive until this returns.
  void interrupt();
  /// Whether interrupt() was called: a failure since is the interruption, not a fault.
  bool interrupted() const { return interrupted_.load(); }

 private:
  Connection(Endpoint endpoint, std::unique_ptr<LinkOptions> options, std::unique_ptr<Link> link,
             bool cluster);

  // Sends one command, following MOVED/ASK, and breaks the link on replies that say this
  // server cannot serve us.
  Result<Reply> send(Argv& argv, const ReplyLimits* limits = nullptr);
  // Error replies that mean "wrong server, or none can serve now": the link is dropped.
  Result<Reply> checked(Result<Reply> reply);

  Endpoint endpoint_;
  std::unique_ptr<LinkOptions> options_;
  std::unique_ptr<Link> link_;
  bool cluster_ = false;
  bool break_reported_ = false;  // the topology was told this connection broke
  std::mutex link_mutex_;        // interrupt() against a redirect replacing link_
  std::atomic<bool> interrupted_{false};
};

}  // namespace relay::redis
