#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "redis/endpoint.h"
#include "redis/errors.h"

namespace relay::redis {

class Link;

/// Redis Cluster's hash slot of `key` (CRC16 of its hash tag, or of the whole key, mod 16384).
std::uint16_t keySlot(std::string_view key);

/// Whether `key` has a hash tag: a '{' later followed by '}' with at least one byte between.
/// Every key that embeds such a name after a brace-free prefix (`relay:{events}:dlq`) shares
/// its slot.
bool hasHashTag(std::string_view key);

/// A MOVED or ASK error reply: where the slot is served now.
struct Redirect {
  bool ask = false;  // ASK: this command only, preceded by ASKING; MOVED: from now on
  int slot = 0;
  Address target;
};

/// The redirect in `error` ("MOVED 3999 127.0.0.1:6381", "ASK ..."); nullopt for any other
/// error. An empty host in the reply means `current`'s host.
std::optional<Redirect> parseRedirect(const Error& error, const Address& current);

/// The master serving `slot`, from CLUSTER SLOTS on `link`.
Result<Address> slotMaster(Link& link, int slot);

}  // namespace relay::redis
