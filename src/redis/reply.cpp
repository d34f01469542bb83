#include "redis/reply.h"

#include <hiredict/hiredict.h>

#include <string>
#include <utility>

namespace relay::redis {

const char* replyTypeName(ReplyType type) {
  switch (type) {
    case ReplyType::kString:
      return "bulk string";
    case ReplyType::kArray:
      return "array";
    case ReplyType::kInteger:
      return "integer";
    case ReplyType::kNil:
      return "nil";
    case ReplyType::kStatus:
      return "status";
    case ReplyType::kError:
      return "error";
  }
  return "unknown";
}

ReplyType ReplyView::type() const {
  if (reply_ == nullptr) return ReplyType::kNil;
  switch (reply_->type) {
    case REDICT_REPLY_STRING:
      return ReplyType::kString;
    case REDICT_REPLY_ARRAY:
      return ReplyType::kArray;
    case REDICT_REPLY_INTEGER:
      return ReplyType::kInteger;
    case REDICT_REPLY_STATUS:
      return ReplyType::kStatus;
    case REDICT_REPLY_ERROR:
      return ReplyType::kError;
    case REDICT_REPLY_NIL:
    default:
      // Relay never sends HELLO 3, so the server speaks RESP2, whose six types are all handled
      // above; RESP3-only types (double, map, ...) cannot arrive.
      return ReplyType::kNil;
  }
}

Error ReplyView::typeMismatch(std::string_view expected) const {
  std::string message =
      "expected " + std::string(expected) + " reply, got " + std::string(replyTypeName(type()));
  if (isError()) message += " '" + std::string(reply_->str, reply_->len) + "'";
  return {ErrorKind::kProtocol, std::move(message)};
}

Result<std::string_view> ReplyView::string() const {
  if (type() != ReplyType::kString) return typeMismatch("a bulk string");
  return std::string_view(reply_->str, reply_->len);
}

Result<std::optional<std::string_view>> ReplyView::optionalString() const {
  if (isNil()) return std::optional<std::string_view>();
  if (type() != ReplyType::kString) return typeMismatch("a bulk string or nil");
  return std::optional<std::string_view>(std::string_view(reply_->str, reply_->len));
}

Result<std::string_view> ReplyView::status() const {
  if (type() != ReplyType::kStatus) return typeMismatch("a status");
  return std::string_view(reply_->str, reply_->len);
}

Result<std::string_view> ReplyView::errorText() const {
  if (type() != ReplyType::kError) return typeMismatch("an error");
  return std::string_view(reply_->str, reply_->len);
}

Result<long long> ReplyView::integer() const {
  if (type() != ReplyType::kInteger) return typeMismatch("an integer");
  return reply_->integer;
}

Result<std::vector<ReplyView>> ReplyView::elements() const {
  if (type() != ReplyType::kArray) return typeMismatch("an array");
  std::vector<ReplyView> out;
  out.reserve(reply_->elements);
  for (size_t i = 0; i < reply_->elements; ++i) out.emplace_back(reply_->element[i]);
  return out;
}

Result<ReplyView> ReplyView::at(size_t index) const {
  if (type() != ReplyType::kArray) return typeMismatch("an array");
  if (index >= reply_->elements) {
    return Error{ErrorKind::kProtocol, "array reply has " + std::to_string(reply_->elements) +
                                           " elements, wanted element " + std::to_string(index)};
  }
  return ReplyView(reply_->element[index]);
}

size_t ReplyView::size() const { return type() == ReplyType::kArray ? reply_->elements : 0; }

Error ReplyView::toError() const {
  if (!isError()) return typeMismatch("an error");
  return errorFromReply(std::string_view(reply_->str, reply_->len));
}

Reply::Reply(Reply&& other) noexcept
    : ReplyView(std::exchange(other.reply_, nullptr)), owned_(std::move(other.owned_)) {}

Reply& Reply::operator=(Reply&& other) noexcept {
  if (this != &other) {
    owned_ = std::move(other.owned_);
    reply_ = std::exchange(other.reply_, nullptr);
  }
  return *this;
}

}  // namespace relay::redis
