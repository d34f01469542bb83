#include "redis/endpoint.h"

#include <string>

namespace relay::redis {

std::string Address::describe() const {
  if (isUnix()) return "unix://" + unix_path;
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

Address Endpoint::address() const {
  if (transport == Transport::kUnix) return Address{"", 0, unix_path};
  return Address{host, port, ""};
}

std::string Endpoint::describe() const {
  if (transport == Transport::kUnix) {
    std::string out = "unix://" + unix_path;
    if (hasAuth()) out += " as " + (username.empty() ? std::string("default") : username);
    if (db != 0) out += " db " + std::to_string(db);
    return out;
  }
  std::string servers;
  if (isSentinel()) {
    for (const Address& sentinel : sentinels) {
      servers += (servers.empty() ? "" : ",") + sentinel.describe();
    }
    servers += "/" + master_name;
  } else {
    servers = address().describe();
  }
  if (!hasAuth() && db == 0 && !tls && !isSentinel()) return servers;
  std::string out =
      std::string(tls ? "rediss" : "redis") + (isSentinel() ? "+sentinel" : "") + "://";
  if (hasAuth()) {
    out += username;
    if (!password.empty()) out += ":***";
    out += "@";
  }
  out += servers;
  if (db != 0) out += "/" + std::to_string(db);
  return out;
}

bool Endpoint::operator==(const Endpoint& other) const {
  return transport == other.transport && host == other.host && port == other.port &&
         unix_path == other.unix_path && username == other.username && password == other.password &&
         db == other.db && tls == other.tls && tls_settings == other.tls_settings &&
         sentinels == other.sentinels && master_name == other.master_name &&
         slot_key == other.slot_key;
}

}  // namespace relay::redis
