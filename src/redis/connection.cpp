#include "redis/connection.h"

#include <fcntl.h>
#include <hiredict/hiredict.h>
#include <sys/time.h>

#include <cerrno>
#include <string>
#include <utility>

#include "redis/sigpipe_guard.h"

namespace relay::redis {
namespace {

timeval toTimeval(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

// hiredict's argv/argvlen arrays for one command, borrowed from the caller's strings.
class Argv {
 public:
  template <typename Range>
  explicit Argv(const Range& args) {
    for (const auto& arg : args) add(arg);
  }
  void add(std::string_view arg) {
    // An empty string_view may carry a null data(); hiredict memcpy()s from it even for 0 bytes.
    pointers_.push_back(arg.empty() ? "" : arg.data());
    lengths_.push_back(arg.size());
  }
  const char** pointers() { return pointers_.data(); }
  const size_t* lengths() const { return lengths_.data(); }
  size_t size() const { return pointers_.size(); }

 private:
  std::vector<const char*> pointers_;
  std::vector<size_t> lengths_;
};

// A top-level error reply becomes an Error so callers handle it with the other failures.
Result<Reply> replyOrError(Reply reply) {
  if (reply.isError()) return reply.toError();
  return reply;
}

Error misuse(std::string message) { return {ErrorKind::kProtocol, std::move(message)}; }

}  // namespace

Connection::Connection(Endpoint endpoint, CHandle<redictContext, redictFree> context)
    : endpoint_(std::move(endpoint)), where_(endpoint_.describe()), context_(std::move(context)) {}

Connection::~Connection() = default;

Result<std::unique_ptr<Connection>> Connection::create(const Endpoint& endpoint,
                                                       ConnectionSettings settings) {
  const bool bounded = settings.connect_timeout.count() > 0;
  const timeval connect_timeout = toTimeval(settings.connect_timeout);
  errno = 0;
  redictContext* raw = nullptr;
  if (endpoint.transport == Endpoint::Transport::kUnix) {
    raw = bounded ? redictConnectUnixWithTimeout(endpoint.unix_path.c_str(), connect_timeout)
                  : redictConnectUnix(endpoint.unix_path.c_str());
  } else {
    raw = bounded ? redictConnectWithTimeout(endpoint.host.c_str(), endpoint.port, connect_timeout)
                  : redictConnect(endpoint.host.c_str(), endpoint.port);
  }
  const int saved_errno = errno;
  CHandle<redictContext, redictFree> context(raw);
  if (!context) return Error{ErrorKind::kIo, endpoint.describe() + ": out of memory"};
  if (context->err != 0) {
    return errorFromContext(context->err, context->errstr, saved_errno, endpoint.describe());
  }
  // Handlers are forked from this process: a Redis socket must never reach one (hiredict opens
  // sockets without SOCK_CLOEXEC).
  if (::fcntl(context->fd, F_SETFD, FD_CLOEXEC) != 0) {
    return Error{ErrorKind::kIo, endpoint.describe() + ": fcntl(FD_CLOEXEC) failed"};
  }
  if (endpoint.transport == Endpoint::Transport::kTcp) {
    // Lets the kernel notice a server that vanished without a FIN while we sit idle.
    if (redictEnableKeepAlive(context.get()) != REDICT_OK) {
      return errorFromContext(context->err, context->errstr, errno, endpoint.describe());
    }
  }
  std::unique_ptr<Connection> connection(new Connection(endpoint, std::move(context)));
  if (auto status = connection->setCommandTimeout(settings.command_timeout); !status) {
    return status.error();
  }
  if (endpoint.hasAuth()) {
    auto auth = endpoint.username.empty()
                    ? connection->command({"AUTH", endpoint.password})
                    : connection->command({"AUTH", endpoint.username, endpoint.password});
    if (!auth) return auth.error();
  }
  if (endpoint.db != 0) {
    auto select = connection->command({"SELECT", std::to_string(endpoint.db)});
    if (!select) return select.error();
  }
  return connection;
}

Status Connection::usable() const {
  if (!broken_) return {};
  return Error{ErrorKind::kClosed, where_ + ": connection unusable after an earlier error (" +
                                       broken_reason_ + "); create a new Connection"};
}

Error Connection::fail(int saved_errno) {
  Error error = errorFromContext(context_->err, context_->errstr, saved_errno, where_);
  broken_ = true;
  broken_reason_ = error.message;
  pending_ = 0;
  return error;
}

Result<Reply> Connection::send(const char** argv, const size_t* lengths, size_t count) {
  if (auto status = usable(); !status) return status.error();
  if (count == 0) return misuse("empty command");
  if (pending_ != 0) {
    return misuse(std::to_string(pending_) +
                  " appended commands still await getReply(); a command now would read their "
                  "reply");
  }
  void* raw = nullptr;
  int saved_errno = 0;
  {
    SigpipeGuard guard;
    raw = redictCommandArgv(context_.get(), static_cast<int>(count), argv, lengths);
    saved_errno = errno;
  }
  if (raw == nullptr) return fail(saved_errno);
  return replyOrError(Reply(static_cast<redictReply*>(raw)));
}

Result<Reply> Connection::command(std::initializer_list<std::string_view> args) {
  Argv argv(args);
  return send(argv.pointers(), argv.lengths(), argv.size());
}

Result<Reply> Connection::command(const std::vector<std::string>& args) {
  Argv argv(args);
  return send(argv.pointers(), argv.lengths(), argv.size());
}

Result<Reply> Connection::command(std::span<const std::string_view> args) {
  Argv argv(args);
  return send(argv.pointers(), argv.lengths(), argv.size());
}

Status Connection::append(const char** argv, const size_t* lengths, size_t count) {
  if (auto status = usable(); !status) return status.error();
  if (count == 0) return misuse("empty command");
  // Only buffers; nothing touches the socket until getReply().
  if (redictAppendCommandArgv(context_.get(), static_cast<int>(count), argv, lengths) !=
      REDICT_OK) {
    return fail(errno);
  }
  ++pending_;
  return {};
}

Status Connection::appendCommand(std::initializer_list<std::string_view> args) {
  Argv argv(args);
  return append(argv.pointers(), argv.lengths(), argv.size());
}

Status Connection::appendCommand(const std::vector<std::string>& args) {
  Argv argv(args);
  return append(argv.pointers(), argv.lengths(), argv.size());
}

Status Connection::appendCommand(std::span<const std::string_view> args) {
  Argv argv(args);
  return append(argv.pointers(), argv.lengths(), argv.size());
}

Result<Reply> Connection::getReply() {
  if (auto status = usable(); !status) return status.error();
  if (pending_ == 0) return misuse("getReply() without an appended command");
  void* raw = nullptr;
  int rc = REDICT_OK;
  int saved_errno = 0;
  {
    SigpipeGuard guard;
    rc = redictGetReply(context_.get(), &raw);
    saved_errno = errno;
  }
  if (rc != REDICT_OK || raw == nullptr) return fail(saved_errno);
  --pending_;
  return replyOrError(Reply(static_cast<redictReply*>(raw)));
}

Result<std::vector<Result<Reply>>> Connection::pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  if (pending_ != 0) {
    return misuse(std::to_string(pending_) + " appended commands still await getReply()");
  }
  for (const auto& args : commands) {
    if (auto status = appendCommand(args); !status) return status.error();
  }
  std::vector<Result<Reply>> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    auto reply = getReply();
    if (!reply && reply.error().kind != ErrorKind::kReply) return reply.error();
    replies.push_back(std::move(reply));
  }
  return replies;
}

Result<Reply> Connection::eval(const Script& script, const std::vector<std::string>& keys,
                               const std::vector<std::string>& args) {
  const std::string key_count = std::to_string(keys.size());
  auto argvFor = [&](std::string_view verb, std::string_view script_ref) {
    Argv argv(std::initializer_list<std::string_view>{verb, script_ref, key_count});
    for (const auto& key : keys) argv.add(key);
    for (const auto& arg : args) argv.add(arg);
    return argv;
  };
  Argv by_sha = argvFor("EVALSHA", script.sha1());
  auto reply = send(by_sha.pointers(), by_sha.lengths(), by_sha.size());
  if (reply || !isReplyError(reply.error(), "NOSCRIPT")) return reply;
  // The server lost its script cache (restart, SCRIPT FLUSH); EVAL runs the source and caches
  // it again for the next EVALSHA.
  Argv by_source = argvFor("EVAL", script.source());
  return send(by_source.pointers(), by_source.lengths(), by_source.size());
}

Status Connection::setCommandTimeout(std::chrono::milliseconds timeout) {
  if (auto status = usable(); !status) return status.error();
  if (timeout.count() < 0) return misuse("negative command timeout");
  if (redictSetTimeout(context_.get(), toTimeval(timeout)) != REDICT_OK) return fail(errno);
  return {};
}

}  // namespace relay::redis
