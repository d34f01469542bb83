#include "redis/errors.h"

#include <hiredict/hiredict.h>

#include <cerrno>
#include <string>

namespace relay::redis {

const char* errorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kIo:
      return "i/o";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kClosed:
      return "closed";
    case ErrorKind::kProtocol:
      return "protocol";
    case ErrorKind::kReply:
      return "reply";
    case ErrorKind::kConfig:
      return "configuration";
  }
  return "unknown";
}

relay::Error Error::toRelay() const {
  std::string text = "redis: " + message;
  switch (kind) {
    case ErrorKind::kIo:
    case ErrorKind::kClosed:
      return relay::Error::unavailable(std::move(text));
    case ErrorKind::kTimeout:
      return relay::Error{relay::ErrorKind::kTimeout, std::move(text)};
    case ErrorKind::kProtocol:
    case ErrorKind::kReply:
      return relay::Error::internal(std::move(text));
    case ErrorKind::kConfig:
      return relay::Error::invalid(std::move(text));
  }
  return relay::Error::internal(std::move(text));
}

std::string_view replyErrorCode(const Error& error) {
  if (error.kind != ErrorKind::kReply) return {};
  std::string_view text = error.message;
  return text.substr(0, text.find(' '));
}

bool isReplyError(const Error& error, std::string_view code) {
  return error.kind == ErrorKind::kReply && !code.empty() && replyErrorCode(error) == code;
}

bool retryCannotHelp(const Error& error) {
  return error.kind == ErrorKind::kConfig || isReplyError(error, "WRONGPASS") ||
         isReplyError(error, "NOAUTH") || isReplyError(error, "NOPERM");
}

bool breaksConnection(const Error& error) {
  for (std::string_view code : {"READONLY", "NOAUTH", "LOADING", "MASTERDOWN", "CLUSTERDOWN"}) {
    if (isReplyError(error, code)) return true;
  }
  return false;
}

Error errorFromContext(int hiredict_err, std::string_view errstr, int saved_errno,
                       std::string_view where) {
  std::string message(where);
  if (!message.empty()) message += ": ";
  message += errstr.empty() ? std::string_view("unknown hiredict error") : errstr;
  switch (hiredict_err) {
    case REDICT_ERR_IO:
      // A blocking read/write that hit SO_RCVTIMEO/SO_SNDTIMEO fails with EAGAIN; a connect
      // that ran out of time is reported with ETIMEDOUT.
      if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT) {
        return {ErrorKind::kTimeout, message + " (timed out)"};
      }
      return {ErrorKind::kIo, std::move(message)};
    case REDICT_ERR_TIMEOUT:
      return {ErrorKind::kTimeout, message + " (timed out)"};
    case REDICT_ERR_EOF:
      return {ErrorKind::kClosed, std::move(message)};
    case REDICT_ERR_PROTOCOL:
      return {ErrorKind::kProtocol, std::move(message)};
    case REDICT_ERR_OOM:
    case REDICT_ERR_OTHER:
    default:
      // OTHER covers unresolvable hosts and bad socket options: a failure to reach the server.
      return {ErrorKind::kIo, std::move(message)};
  }
}

Error errorFromReply(std::string_view text) { return {ErrorKind::kReply, std::string(text)}; }

}  // namespace relay::redis
