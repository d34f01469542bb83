#include "redis/connection.h"

#include <algorithm>
#include <string>
#include <utility>

#include "redis/argv.h"
#include "redis/cluster.h"
#include "redis/link.h"
#include "redis/sentinel.h"
#include "redis/tls_context.h"
#include "redis/topology.h"

namespace relay::redis {
namespace {

// A moved slot settles in one redirect; more means the cluster is still reconfiguring.
constexpr int kMaxRedirects = 5;

Result<std::unique_ptr<Link>> openFirst(const Endpoint& endpoint, const LinkOptions& options) {
  if (!endpoint.isSentinel()) return Link::open(endpoint.address(), options);
  LinkOptions sentinel = options;
  sentinel.db = 0;
  sentinel.auth_on_demand = true;
  return openSentinelMaster(endpoint, sentinel, options);
}

}  // namespace

Connection::Connection(Endpoint endpoint, std::unique_ptr<LinkOptions> options,
                       std::unique_ptr<Link> link, bool cluster)
    : endpoint_(std::move(endpoint)),
      options_(std::move(options)),
      link_(std::move(link)),
      cluster_(cluster) {}

Connection::~Connection() = default;

Result<std::unique_ptr<Connection>> Connection::create(const Endpoint& endpoint,
                                                       ConnectionSettings settings) {
  auto options = std::make_unique<LinkOptions>();
  options->timeouts = settings;
  options->username = endpoint.username;
  options->password = endpoint.password;
  options->db = endpoint.db;
  if (endpoint.tls) {
    auto tls = TlsContext::create(endpoint.tls_settings);
    if (!tls) return Error{tls.error().kind, endpoint.describe() + ": " + tls.error().message};
    options->tls = std::move(tls).value();
  }
  auto opened = openFirst(endpoint, *options);
  if (!opened) return opened.error();
  std::unique_ptr<Link> link = std::move(opened).value();
  const bool cluster = link->hello().mode == "cluster";
  if (cluster && !endpoint.slot_key.empty()) {
    if (!hasHashTag(endpoint.slot_key)) {
      return Error{ErrorKind::kConfig,
                   endpoint.describe() + " is a Redis Cluster, and the keys named after '" +
                       endpoint.slot_key +
                       "' would spread over several hash slots: use a hash-tagged name such "
                       "as '{" +
                       endpoint.slot_key + "}'"};
    }
    auto master = slotMaster(*link, keySlot(endpoint.slot_key));
    if (!master) return master.error();
    if (!(*master == link->address())) {
      auto moved = Link::open(*master, *options);
      if (!moved) return moved.error();
      link = std::move(moved).value();
    }
  }
  if (endpoint.topology) endpoint.topology->connectedTo(link->address().describe());
  return std::unique_ptr<Connection>(
      new Connection(endpoint, std::move(options), std::move(link), cluster));
}

bool Connection::ok() const { return link_->ok(); }

void Connection::interrupt() {
  const std::lock_guard lock(link_mutex_);
  interrupted_ = true;
  link_->shutdownSocket();
}

std::string Connection::server() const { return link_->address().describe(); }

Result<Reply> Connection::checked(Result<Reply> reply) {
  if (!reply.ok() && breaksConnection(reply.error()) && link_->ok()) {
    link_->breakWith(link_->where() + " answered " + std::string(replyErrorCode(reply.error())) +
                     ": it cannot serve this connection now");
  }
  if (!link_->ok() && !break_reported_) {
    break_reported_ = true;
    if (endpoint_.topology) endpoint_.topology->connectionBroke();
  }
  return reply;
}

Result<Reply> Connection::send(Argv& argv, const ReplyLimits* limits) {
  for (int redirects = 0;; ++redirects) {
    auto reply = link_->send(argv, limits);
    const auto redirect =
        reply.ok() ? std::nullopt : parseRedirect(reply.error(), link_->address());
    if (!redirect || redirects == kMaxRedirects) return checked(std::move(reply));
    auto target = Link::open(redirect->target, *options_);
    if (!target) {
      link_->breakWith("redirected to " + redirect->target.describe() +
                       ", which cannot be reached: " + target.error().message);
      (void)checked(target.error());
      return target.error();
    }
    if (redirect->ask) {
      // The slot is migrating: this one command goes to the target, after ASKING.
      Argv asking(std::initializer_list<std::string_view>{"ASKING"});
      if (auto status = (*target)->append(asking); !status) return status.error();
      if (auto status = (*target)->append(argv, limits); !status) return status.error();
      if (auto asked = (*target)->getReply(); !asked) return asked.error();
      return (*target)->getReply();
    }
    {
      const std::lock_guard lock(link_mutex_);
      link_ = std::move(target).value();
      if (interrupted_) link_->shutdownSocket();
    }
    break_reported_ = false;
    if (endpoint_.topology) endpoint_.topology->redirectedTo(link_->address().describe());
  }
}

Result<Reply> Connection::command(std::initializer_list<std::string_view> args) {
  Argv argv(args);
  return send(argv);
}

Result<Reply> Connection::command(const std::vector<std::string>& args) {
  Argv argv(args);
  return send(argv);
}

Result<Reply> Connection::command(std::span<const std::string_view> args) {
  Argv argv(args);
  return send(argv);
}

Result<Reply> Connection::command(std::initializer_list<std::string_view> args,
                                  const ReplyLimits& limits) {
  Argv argv(args);
  return send(argv, &limits);
}

Result<Reply> Connection::command(const std::vector<std::string>& args, const ReplyLimits& limits) {
  Argv argv(args);
  return send(argv, &limits);
}

Status Connection::appendCommand(std::initializer_list<std::string_view> args) {
  Argv argv(args);
  return link_->append(argv);
}

Status Connection::appendCommand(const std::vector<std::string>& args) {
  Argv argv(args);
  return link_->append(argv);
}

Status Connection::appendCommand(std::span<const std::string_view> args) {
  Argv argv(args);
  return link_->append(argv);
}

Status Connection::appendCommand(const std::vector<std::string>& args, const ReplyLimits& limits) {
  Argv argv(args);
  return link_->append(argv, &limits);
}

Status Connection::flush() { return link_->flush(); }

Result<Reply> Connection::getReply() { return checked(link_->getReply()); }

size_t Connection::pendingReplies() const { return link_->pending(); }

Result<std::vector<Result<Reply>>> Connection::pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  return pipeline(commands, std::vector<std::optional<ReplyLimits>>(commands.size()));
}

Result<std::vector<Result<Reply>>> Connection::pipeline(
    const std::vector<std::vector<std::string>>& commands,
    const std::vector<std::optional<ReplyLimits>>& limits) {
  const auto limitsOf = [&limits](std::size_t i) -> const ReplyLimits* {
    return i < limits.size() && limits[i] ? &*limits[i] : nullptr;
  };
  if (link_->pending() != 0) {
    return Error{ErrorKind::kProtocol,
                 std::to_string(link_->pending()) + " appended commands still await getReply()"};
  }
  // A command after the first may ask for limits: the filter must be in place before any.
  if (std::any_of(limits.begin(), limits.end(), [](const auto& l) { return l.has_value(); })) {
    if (auto status = link_->filterReplies(); !status) return checked(status.error()).error();
  }
  std::vector<Argv> argvs;
  argvs.reserve(commands.size());
  for (const auto& args : commands) {
    argvs.emplace_back(args);
    if (auto status = link_->append(argvs.back(), limitsOf(argvs.size() - 1)); !status) {
      return checked(status.error()).error();
    }
  }
  std::vector<Result<Reply>> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    auto reply = link_->getReply();
    if (!reply && reply.error().kind != ErrorKind::kReply) return checked(reply.error()).error();
    replies.push_back(std::move(reply));
  }
  // A cluster that moved the slot answered MOVED to every command from the first one it did
  // not run: sending those again, in order, keeps the pipeline's order.
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].ok()) continue;
    if (parseRedirect(replies[i].error(), link_->address())) {
      replies[i] = send(argvs[i], limitsOf(i));
    } else {
      replies[i] = checked(std::move(replies[i]));
    }
  }
  return replies;
}

Result<Reply> Connection::eval(const Script& script, const std::vector<std::string>& keys,
                               const std::vector<std::string>& args, const ReplyLimits* limits) {
  const std::string key_count = std::to_string(keys.size());
  auto argvFor = [&](std::string_view verb, std::string_view script_ref) {
    Argv argv(std::initializer_list<std::string_view>{verb, script_ref, key_count});
    for (const auto& key : keys) argv.add(key);
    for (const auto& arg : args) argv.add(arg);
    return argv;
  };
  Argv by_sha = argvFor("EVALSHA", script.sha1());
  auto reply = send(by_sha, limits);
  if (reply || !isReplyError(reply.error(), "NOSCRIPT")) return reply;
  // The server lost its script cache (restart, failover to a replica, SCRIPT FLUSH); EVAL runs
  // the source and caches it again for the next EVALSHA.
  Argv by_source = argvFor("EVAL", script.source());
  return send(by_source, limits);
}

Status Connection::setCommandTimeout(std::chrono::milliseconds timeout) {
  if (auto status = link_->setCommandTimeout(timeout); !status) return status.error();
  options_->timeouts.command_timeout = timeout;  // for the links redirects open
  return {};
}

}  // namespace relay::redis
