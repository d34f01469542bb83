#include "redis/sentinel.h"

#include <string>

#include "common/whole_number.h"

namespace relay::redis {
namespace {

// The master's address as one sentinel sees it.
Result<Address> askSentinel(const Address& sentinel, const std::string& master_name,
                            const LinkOptions& options) {
  auto link = Link::open(sentinel, options);
  if (!link) return link.error();
  Argv ask(
      std::initializer_list<std::string_view>{"SENTINEL", "get-master-addr-by-name", master_name});
  auto reply = (*link)->send(ask);
  if (!reply) return reply.error();
  if (reply->isNil()) {
    return Error{ErrorKind::kReply, "does not know a master named '" + master_name + "'"};
  }
  auto host = reply->at(0);
  auto port = reply->at(1);
  if (!host || !port || !host->string() || !port->string()) {
    return Error{ErrorKind::kProtocol, "answered something other than [host, port]"};
  }
  Address address;
  address.host = std::string(*host->string());
  if (!parseWholeNumber(*port->string(), address.port)) {
    return Error{ErrorKind::kProtocol, "answered a port that is not a number"};
  }
  return address;
}

}  // namespace

Result<std::unique_ptr<Link>> openSentinelMaster(const Endpoint& endpoint,
                                                 const LinkOptions& sentinel_options,
                                                 const LinkOptions& master_options) {
  std::string said;
  for (const Address& sentinel : endpoint.sentinels) {
    said += (said.empty() ? "" : "; ") + sentinel.describe() + ": ";
    auto master = askSentinel(sentinel, endpoint.master_name, sentinel_options);
    if (!master && retryCannotHelp(master.error())) return master.error();
    if (!master) {
      said += master.error().message;
      continue;
    }
    auto link = Link::open(*master, master_options);
    if (!link && retryCannotHelp(link.error())) return link.error();
    if (!link) {
      said += "master " + master->describe() + ": " + link.error().message;
      continue;
    }
    if ((*link)->hello().role != "master") {
      said += "named " + master->describe() + ", which is a " + (*link)->hello().role +
              " (failover in progress?)";
      continue;
    }
    return link;
  }
  return Error{ErrorKind::kIo, "no sentinel named a reachable master '" + endpoint.master_name +
                                   "' (" + said + ")"};
}

}  // namespace relay::redis
