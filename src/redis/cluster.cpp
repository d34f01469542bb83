#include "redis/cluster.h"

#include <string>

#include "common/whole_number.h"
#include "redis/link.h"

namespace relay::redis {
namespace {

constexpr int kSlots = 16384;

// CRC16-CCITT (XMODEM), the variant Redis Cluster uses (polynomial 0x1021, initial 0).
std::uint16_t crc16(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (unsigned char byte : bytes) {
    crc ^= static_cast<std::uint16_t>(byte) << 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<std::uint16_t>(crc << 1);
    }
  }
  return crc;
}

// The part of `key` that is hashed: the first {tag} when non-empty, else the whole key.
std::string_view hashedPart(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

Error protocol(std::string message) {
  return {ErrorKind::kProtocol, "unexpected CLUSTER SLOTS reply: " + std::move(message)};
}

}  // namespace

std::uint16_t keySlot(std::string_view key) { return crc16(hashedPart(key)) % kSlots; }

bool hasHashTag(std::string_view key) { return hashedPart(key).size() != key.size(); }

std::optional<Redirect> parseRedirect(const Error& error, const Address& current) {
  const std::string_view code = replyErrorCode(error);
  if (code != "MOVED" && code != "ASK") return std::nullopt;
  // "MOVED <slot> <host>:<port>"
  std::string_view rest = std::string_view(error.message).substr(code.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const size_t space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  Redirect redirect;
  redirect.ask = code == "ASK";
  const std::string_view slot = rest.substr(0, space);
  const std::string_view target = rest.substr(space + 1);
  const size_t colon = target.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  if (!parseWholeNumber(slot, redirect.slot)) return std::nullopt;
  if (!parseWholeNumber(target.substr(colon + 1), redirect.target.port)) return std::nullopt;
  std::string_view host = target.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  redirect.target.host = host.empty() ? current.host : std::string(host);
  return redirect;
}

Result<Address> slotMaster(Link& link, int slot) {
  Argv argv(std::initializer_list<std::string_view>{"CLUSTER", "SLOTS"});
  auto reply = link.send(argv);
  if (!reply) return reply.error();
  auto ranges = reply->elements();
  if (!ranges) return ranges.error();
  for (const ReplyView& range : *ranges) {
    // [start, end, [host, port, id, ...] (the master), replicas...]
    auto start = range.at(0);
    auto end = range.at(1);
    auto master = range.at(2);
    if (!start || !end || !master) return protocol("a slot range has fewer than 3 elements");
    auto first = start->integer();
    auto last = end->integer();
    if (!first || !last) return protocol("slot bounds are not integers");
    if (slot < *first || slot > *last) continue;
    auto host = master->at(0);
    auto port = master->at(1);
    if (!host || !port || !host->string() || !port->integer()) {
      return protocol("the master of a slot range is not [host, port, ...]");
    }
    Address address;
    address.host = host->string()->empty() ? link.address().host : std::string(*host->string());
    address.port = static_cast<int>(*port->integer());
    return address;
  }
  return Error{ErrorKind::kReply, "CLUSTERDOWN hash slot " + std::to_string(slot) +
                                      " is not served by any node (per " + link.where() + ")"};
}

}  // namespace relay::redis
