#pragma once

#include <string>

#include "redis/connection.h"

namespace relay::testing {

/// DEBUG DIGEST: one checksum of the whole dataset (every key, type and value), so that a test
/// can assert that a command changed nothing at all in Redis. The test servers allow DEBUG.
inline std::string datasetDigest(redis::Connection& redis) {
  auto reply = redis.command({"DEBUG", "DIGEST"});
  if (!reply.ok()) return "error: " + reply.error().message;
  auto text = reply->status();
  if (!text.ok()) text = reply->string();
  return text.ok() ? std::string(*text) : "error: " + text.error().message;
}

}  // namespace relay::testing
