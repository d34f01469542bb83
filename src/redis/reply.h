#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "common/c_free.h"
#include "redis/errors.h"

// Declared here rather than by including hiredict.h so users of this header do not inherit
// hiredict's REDICT_* macros; errors.cpp/reply.cpp include the real header, which checks that
// these declarations match.
struct redictReply;
extern "C" void freeReplyObject(void* reply);

namespace relay::redis {

/// The RESP2 reply types hiredict produces (Relay never switches the protocol to RESP3).
enum class ReplyType { kString, kArray, kInteger, kNil, kStatus, kError };

/// Name of a reply type for messages ("bulk string", "array", ...).
const char* replyTypeName(ReplyType type);

/// A non-owning, read-only view of one reply node; valid while the owning Reply lives.
/// Every typed accessor checks the type and returns a kProtocol error naming the expected and
/// the actual type instead of reading the wrong union member.
class ReplyView {
 public:
  /// `reply` may be null (a moved-from Reply), which reads as nil.
  explicit ReplyView(const redictReply* reply) : reply_(reply) {}

  ReplyType type() const;
  bool isNil() const { return type() == ReplyType::kNil; }
  bool isError() const { return type() == ReplyType::kError; }
  bool isArray() const { return type() == ReplyType::kArray; }

  /// The bytes of a bulk string (binary-safe: may contain NULs).
  Result<std::string_view> string() const;
  /// A bulk string, or nullopt for nil (HGET of a missing field, ...).
  Result<std::optional<std::string_view>> optionalString() const;
  /// The text of a status reply ("OK", "PONG").
  Result<std::string_view> status() const;
  /// The text of an error reply ("WRONGTYPE Operation against ...").
  Result<std::string_view> errorText() const;
  Result<long long> integer() const;
  /// The elements of an array reply; each view lives as long as this reply.
  Result<std::vector<ReplyView>> elements() const;
  /// Element `index` of an array reply; kProtocol when not an array or out of range.
  Result<ReplyView> at(size_t index) const;
  /// Number of elements for an array, 0 for every other type.
  size_t size() const;

  /// An error reply as an Error{kReply}; kProtocol when the reply is not an error.
  Error toError() const;

 protected:
  const redictReply* reply_;

 private:
  Error typeMismatch(std::string_view expected) const;
};

/// Owns one hiredict reply tree and frees it; the accessors come from ReplyView. Move-only.
class Reply : public ReplyView {
 public:
  /// Takes ownership of `reply` (from redictCommandArgv, redictGetReply or a redictReader).
  explicit Reply(redictReply* reply) : ReplyView(reply), owned_(reply) {}
  Reply(Reply&& other) noexcept;
  Reply& operator=(Reply&& other) noexcept;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply() = default;

  /// A view of the root node, e.g. to pass into a helper that takes ReplyView.
  ReplyView view() const { return ReplyView(reply_); }

 private:
  CHandle<redictReply, freeReplyObject> owned_;
};

}  // namespace relay::redis
