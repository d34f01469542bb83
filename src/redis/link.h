#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/c_free.h"
#include "redis/argv.h"
#include "redis/connection_settings.h"
#include "redis/endpoint.h"
#include "redis/errors.h"
#include "redis/reply.h"
#include "redis/reply_filter.h"
#include "redis/tls_context.h"

struct redictContext;
extern "C" void redictFree(redictContext* context);

namespace relay::redis {

/// How to open a Link: timeouts, TLS and login.
struct LinkOptions {
  ConnectionSettings timeouts;
  std::shared_ptr<const TlsContext> tls;  // null: plain TCP or unix socket
  std::string username;
  std::string password;
  int db = 0;
  /// Log in only when the server asks (NOAUTH): for sentinels, which may or may not share the
  /// data nodes' password.
  bool auth_on_demand = false;
};

/// What the server said about itself in its HELLO reply.
struct ServerHello {
  std::string mode = "standalone";  // standalone | cluster | sentinel
  std::string role = "master";      // master | replica
};

/// One blocking hiredict connection to one server address: connected, close-on-exec, TLS
/// done, logged in (HELLO 2 AUTH), database selected. The layer under Connection, which adds
/// master discovery and cluster redirects. NOT thread-safe. Any failure other than an error
/// reply (I/O, timeout, EOF, protocol) leaves it broken; every later call fails with kClosed.
class Link {
 public:
  /// Fails with kIo/kTimeout when the server cannot be reached, kConfig when TLS is refused
  /// and kReply when the login or SELECT is (WRONGPASS, NOAUTH, NOPERM).
  static Result<std::unique_ptr<Link>> open(const Address& address, const LinkOptions& options);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  bool ok() const { return !broken_; }
  const Address& address() const { return address_; }
  const std::string& where() const { return where_; }
  const ServerHello& hello() const { return hello_; }

  /// One command and its reply; an error reply comes back as kReply. With `limits`, the reply
  /// is cut as it streams in (ReplyFilter): what the server sends past them never reaches
  /// memory whole.
  Result<Reply> send(Argv& argv, const ReplyLimits* limits = nullptr);
  /// Buffers a command; getReply() flushes and reads the replies in order. `limits` as send().
  Status append(Argv& argv, const ReplyLimits* limits = nullptr);
  /// Puts the reply filter between the socket and hiredict's reader now, so that commands
  /// appended after others (a pipeline) may ask for limits; only between replies. Otherwise
  /// the first send() or append() with limits does it.
  Status filterReplies();
  /// Writes the buffered commands now, without reading their replies.
  Status flush();
  Result<Reply> getReply();
  size_t pending() const { return pending_; }
  Status setCommandTimeout(std::chrono::milliseconds timeout);
  /// Marks the link unusable: later calls fail with kClosed naming `reason`.
  void breakWith(std::string reason);
  /// Shuts the socket down, so a call blocked on it (in this or another thread) returns at once
  /// with EOF, which breaks the link there. The only member another thread may call.
  void shutdownSocket() const;

 private:
  Link(Address address, CHandle<redictContext, redictFree> context);
  Status usable() const;
  Error fail(int saved_errno);
  Status login(const LinkOptions& options);
  Status sayHello(const LinkOptions& options, bool with_auth);
  // Tells the reply filter what the next command's reply may hold; puts the filter between
  // the socket and hiredict's reader the first time limits are asked for.
  Status expect(const ReplyLimits* limits);

  Address address_;
  std::string where_;  // address_.describe(), prefixed to I/O error messages
  CHandle<redictContext, redictFree> context_;
  std::shared_ptr<const TlsContext> tls_;
  ServerHello hello_;
  size_t pending_ = 0;
  bool filtered_ = false;  // the context reads through a ReplyFilter (its privdata)
  bool broken_ = false;
  std::string broken_reason_;
};

}  // namespace relay::redis
