#include "redis/link.h"

#include <fcntl.h>
#include <hiredict/hiredict.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/sigpipe_guard.h"
#include "redis/no_sigpipe_send.h"

namespace relay::redis {
namespace {

timeval toTimeval(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

// A top-level error reply becomes an Error so callers handle it with the other failures.
Result<Reply> replyOrError(Reply reply) {
  if (reply.isError()) return reply.toError();
  return reply;
}

Error misuse(std::string message) { return {ErrorKind::kProtocol, std::move(message)}; }

// Redis before 6.0 has no HELLO.
bool isUnknownCommand(const Error& error) {
  return isReplyError(error, "ERR") && error.message.find("unknown command") != std::string::npos;
}

// The reply filter of one context (its privdata) and the read it wraps: the socket's, or
// OpenSSL's on a TLS session.
struct FilteredRead {
  ReplyFilter filter;
  ssize_t (*read)(redictContext*, char*, size_t) = nullptr;
  std::string out;  // filtered bytes hiredict has not taken yet
  std::size_t out_at = 0;
};

// hiredict's read contract (bytes, 0 to try again, < 0 with the context's error set), over the
// filtered stream. Reads the socket only when nothing filtered is waiting, at most 16 KiB at a
// time, so a cut bulk string is skipped a read at a time.
ssize_t filteredRead(redictContext* context, char* buffer, size_t capacity) {
  auto* state = static_cast<FilteredRead*>(context->privdata);
  if (state->out_at == state->out.size()) {
    state->out.clear();
    state->out_at = 0;
    char raw[16 * 1024];
    const ssize_t got = state->read(context, raw, sizeof raw);
    if (got <= 0) return got;
    state->filter.feed(std::string_view(raw, static_cast<std::size_t>(got)), state->out);
    // All of it skipped: 0 makes hiredict read again.
    if (state->out.empty()) return 0;
  }
  const std::size_t take = std::min(capacity, state->out.size() - state->out_at);
  std::memcpy(buffer, state->out.data() + state->out_at, take);
  state->out_at += take;
  return static_cast<ssize_t>(take);
}

// The context's function table with filteredRead in place of its read: one per table wrapped
// (plain sockets, TLS), made once and never freed (hiredict frees a context's privdata before
// it last uses the table, so the table cannot live there).
const redictContextFuncs* filteredFunctions(const redictContextFuncs* original) {
  static std::mutex mutex;
  static std::map<const redictContextFuncs*, std::unique_ptr<redictContextFuncs>> tables;
  const std::lock_guard lock(mutex);
  std::unique_ptr<redictContextFuncs>& table = tables[original];
  if (!table) {
    table = std::make_unique<redictContextFuncs>(*original);
    table->read = filteredRead;
  }
  return table.get();
}

}  // namespace

Link::Link(Address address, CHandle<redictContext, redictFree> context)
    : address_(std::move(address)), where_(address_.describe()), context_(std::move(context)) {}

Link::~Link() = default;

Result<std::unique_ptr<Link>> Link::open(const Address& address, const LinkOptions& options) {
  const bool bounded = options.timeouts.connect_timeout.count() > 0;
  const timeval connect_timeout = toTimeval(options.timeouts.connect_timeout);
  const std::string where = address.describe();
  errno = 0;
  redictContext* raw = nullptr;
  if (address.isUnix()) {
    raw = bounded ? redictConnectUnixWithTimeout(address.unix_path.c_str(), connect_timeout)
                  : redictConnectUnix(address.unix_path.c_str());
  } else {
    raw = bounded ? redictConnectWithTimeout(address.host.c_str(), address.port, connect_timeout)
                  : redictConnect(address.host.c_str(), address.port);
  }
  const int saved_errno = errno;
  CHandle<redictContext, redictFree> context(raw);
  if (!context) return Error{ErrorKind::kIo, where + ": out of memory"};
  if (context->err != 0) return errorFromContext(context->err, context->errstr, saved_errno, where);
  // Handlers are forked from this process: a Redis socket must never reach one (hiredict opens
  // sockets without SOCK_CLOEXEC).
  if (::fcntl(context->fd, F_SETFD, FD_CLOEXEC) != 0) {
    return Error{ErrorKind::kIo, where + ": fcntl(FD_CLOEXEC) failed"};
  }
  if (!address.isUnix() && redictEnableKeepAlive(context.get()) != REDICT_OK) {
    // Lets the kernel notice a server that vanished without a FIN while we sit idle.
    return errorFromContext(context->err, context->errstr, errno, where);
  }
  // Writes never raise SIGPIPE (no_sigpipe_send.h); a TLS session replaces these functions with
  // its own and its handshake switches OpenSSL's writes likewise.
  sendWithoutSigpipe(context.get());
  std::unique_ptr<Link> link(new Link(address, std::move(context)));
  if (auto status = link->setCommandTimeout(options.timeouts.command_timeout); !status) {
    return status.error();
  }
  if (options.tls) {
    Status handshake;
    {
      // Once per connection: the handshake writes through hiredict's socket BIO (write(2)).
      SigpipeGuard guard;
      handshake = options.tls->handshake(link->context_.get(), address.host, where);
    }
    if (!handshake) return handshake.error();
    link->tls_ = options.tls;
  }
  if (auto status = link->login(options); !status) return status.error();
  return link;
}

Status Link::login(const LinkOptions& options) {
  const bool has_auth = !options.username.empty() || !options.password.empty();
  if (tls_) ERR_clear_error();
  Status hello = sayHello(options, has_auth && !options.auth_on_demand);
  if (!hello && tls_ && hello.error().kind != ErrorKind::kReply) {
    // TLS 1.3 finishes the client's handshake before the server checks the client
    // certificate; its refusal arrives as an alert on the first read.
    if (auto refusal = tls_->serverRefusal(where_)) return *refusal;
    // The alert may also be lost: the server resets the socket because our HELLO is unread.
    // Without a client certificate that reset is almost surely the refusal.
    if (!tls_->hasClientCertificate() &&
        (hello.error().kind == ErrorKind::kClosed || hello.error().kind == ErrorKind::kIo)) {
      return Error{ErrorKind::kConfig,
                   where_ + ": the server closed the TLS session right after the handshake (" +
                       hello.error().message +
                       "): does it require a client certificate? (give one with its key)"};
    }
  }
  if (!hello && options.auth_on_demand && has_auth && isReplyError(hello.error(), "NOAUTH")) {
    hello = sayHello(options, true);
  }
  if (!hello) return hello.error();
  if (options.db != 0) {
    const std::string db = std::to_string(options.db);  // Argv borrows: it must outlive send()
    Argv select(std::initializer_list<std::string_view>{"SELECT", db});
    if (auto reply = send(select); !reply) return reply.error();
  }
  return {};
}

Status Link::sayHello(const LinkOptions& options, bool with_auth) {
  const std::string& user = options.username.empty() ? std::string("default") : options.username;
  Argv hello(std::initializer_list<std::string_view>{"HELLO", "2"});
  if (with_auth) {
    hello.add("AUTH");
    hello.add(user);
    hello.add(options.password);
  }
  auto reply = send(hello);
  if (!reply && isUnknownCommand(reply.error())) {
    if (!with_auth) return {};
    Argv auth(std::initializer_list<std::string_view>{"AUTH"});
    if (!options.username.empty()) auth.add(options.username);
    auth.add(options.password);
    if (auto authed = send(auth); !authed) return authed.error();
    return {};
  }
  if (!reply) return reply.error();
  // RESP2 renders HELLO's map as alternating names and values.
  for (size_t i = 0; i + 1 < reply->size(); i += 2) {
    auto name = reply->at(i)->string();
    auto value = reply->at(i + 1)->string();
    if (!name.ok() || !value.ok()) continue;
    if (*name == "mode") hello_.mode = std::string(*value);
    if (*name == "role") hello_.role = std::string(*value);
  }
  return {};
}

Status Link::usable() const {
  if (!broken_) return {};
  return Error{ErrorKind::kClosed, where_ + ": connection unusable after an earlier error (" +
                                       broken_reason_ + "); create a new Connection"};
}

void Link::breakWith(std::string reason) {
  broken_ = true;
  broken_reason_ = std::move(reason);
  pending_ = 0;
}

void Link::shutdownSocket() const {
  // The descriptor stays open (and ours) until the link is destroyed: no other socket can
  // have taken its number meanwhile.
  if (context_ && context_->fd >= 0) ::shutdown(context_->fd, SHUT_RDWR);
}

Error Link::fail(int saved_errno) {
  Error error = errorFromContext(context_->err, context_->errstr, saved_errno, where_);
  breakWith(error.message);
  return error;
}

Status Link::filterReplies() {
  if (filtered_) return {};
  if (auto status = usable(); !status) return status;
  // Only between replies: the filter must see each reply from its first byte.
  if (pending_ != 0) return misuse("reply limits asked for while replies are pending");
  auto state = std::make_unique<FilteredRead>();
  state->read = context_->funcs->read;
  context_->privdata = state.release();
  context_->free_privdata = [](void* data) { delete static_cast<FilteredRead*>(data); };
  context_->funcs = filteredFunctions(context_->funcs);
  filtered_ = true;
  return {};
}

Status Link::expect(const ReplyLimits* limits) {
  if (!filtered_) {
    if (limits == nullptr) return {};
    if (auto status = filterReplies(); !status) return status;
  }
  auto* state = static_cast<FilteredRead*>(context_->privdata);
  state->filter.expect(limits ? std::optional<ReplyLimits>(*limits) : std::nullopt);
  return {};
}

Result<Reply> Link::send(Argv& argv, const ReplyLimits* limits) {
  if (auto status = usable(); !status) return status.error();
  if (argv.size() == 0) return misuse("empty command");
  if (pending_ != 0) {
    return misuse(std::to_string(pending_) +
                  " appended commands still await getReply(); a command now would read their "
                  "reply");
  }
  if (auto status = expect(limits); !status) return status.error();
  void* raw = redictCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.pointers(),
                                argv.lengths());
  if (raw == nullptr) return fail(errno);
  return replyOrError(Reply(static_cast<redictReply*>(raw)));
}

Status Link::append(Argv& argv, const ReplyLimits* limits) {
  if (auto status = usable(); !status) return status.error();
  if (argv.size() == 0) return misuse("empty command");
  if (auto status = expect(limits); !status) return status;
  // Only buffers; nothing touches the socket until getReply().
  if (redictAppendCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.pointers(),
                              argv.lengths()) != REDICT_OK) {
    return fail(errno);
  }
  ++pending_;
  return {};
}

Status Link::flush() {
  if (auto status = usable(); !status) return status.error();
  int done = 0;
  while (done == 0) {
    if (redictBufferWrite(context_.get(), &done) != REDICT_OK) return fail(errno);
  }
  return {};
}

Result<Reply> Link::getReply() {
  if (auto status = usable(); !status) return status.error();
  if (pending_ == 0) return misuse("getReply() without an appended command");
  void* raw = nullptr;
  const int rc = redictGetReply(context_.get(), &raw);
  if (rc != REDICT_OK || raw == nullptr) return fail(errno);
  --pending_;
  return replyOrError(Reply(static_cast<redictReply*>(raw)));
}

Status Link::setCommandTimeout(std::chrono::milliseconds timeout) {
  if (auto status = usable(); !status) return status.error();
  if (timeout.count() < 0) return misuse("negative command timeout");
  if (redictSetTimeout(context_.get(), toTimeval(timeout)) != REDICT_OK) return fail(errno);
  return {};
}

}  // namespace relay::redis
