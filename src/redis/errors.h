#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/result.h"

// How Redis failures travel.
//
// relay::Error carries only a relay::ErrorKind, which cannot tell "the socket broke" from
// "Redis answered -BUSYGROUP". Retry decisions need exactly that distinction, so this module
// returns its own redis::Result<T> whose redis::Error carries a redis::ErrorKind. Callers
// switch on `error.kind`; for kReply they test the server's error code with isReplyError()
// (the message is the server's text verbatim, e.g. "NOSCRIPT No matching script..."). At a
// module boundary that speaks relay::Result, convert with toRelay(): kIo/kClosed become
// kUnavailable, kTimeout stays kTimeout, kProtocol/kReply become kInternal, kConfig becomes
// kInvalidArgument.
//
// All hiredict error codes are mapped to kinds in errors.cpp and nowhere else.

namespace relay::redis {

/// What went wrong talking to Redis; the only thing retry logic should look at.
enum class ErrorKind {
  kIo,        // connect/read/write failed (refused, reset, unresolvable host, ...)
  kTimeout,   // the connect or command timeout passed; the connection is now unusable
  kClosed,    // the server closed the connection, or it was already broken by an earlier error
  kProtocol,  // malformed data from the server, or a reply of an unexpected type
  kReply,     // Redis answered with an error reply (-ERR, -WRONGTYPE, -NOSCRIPT, ...)
  kConfig,    // the endpoint cannot work as configured: TLS files or certificate checks, a
              // cluster key without a hash tag; retrying cannot help
};

/// Name of a kind for messages ("i/o", "timeout", "closed", "protocol", "reply",
/// "configuration").
const char* errorKindName(ErrorKind kind);

/// A failure from this module: a kind to switch on and a message for people.
struct Error {
  ErrorKind kind = ErrorKind::kIo;
  /// For kReply: the server's error text verbatim (first word is the error code).
  std::string message;

  /// The same failure as a relay::Error, for modules that speak relay::Result.
  relay::Error toRelay() const;
};

/// True when `error` is a Redis error reply whose code (first word) equals `code`,
/// e.g. isReplyError(e, "BUSYGROUP"). Never true for I/O, timeout or protocol errors.
bool isReplyError(const Error& error, std::string_view code);

/// The first word of a kReply error ("WRONGTYPE"); empty for other kinds.
std::string_view replyErrorCode(const Error& error);

/// Whether connecting again cannot help until an operator changes something: kConfig, and the
/// login refusals WRONGPASS, NOAUTH (a password is required) and NOPERM.
bool retryCannotHelp(const Error& error);

/// Whether an error reply says the server cannot serve this connection now, so the
/// connection must be replaced (and the master found again): READONLY (a replica, e.g. a
/// demoted master), NOAUTH, LOADING, MASTERDOWN, CLUSTERDOWN.
bool breaksConnection(const Error& error);

/// Maps a hiredict context error (redictContext::err, ::errstr) to an Error. `saved_errno` is
/// errno captured right after the failing hiredict call: hiredict reports an expired
/// SO_RCVTIMEO as a plain REDICT_ERR_IO, and only errno (EAGAIN) tells it is a timeout.
/// `where` (an endpoint description) prefixes the message.
Error errorFromContext(int hiredict_err, std::string_view errstr, int saved_errno,
                       std::string_view where);

/// The Error for a Redis error reply with text `text`.
Error errorFromReply(std::string_view text);

/// A value or a redis::Error: relay::Result with this module's typed error.
template <typename T>
using Result = relay::Result<T, Error>;

using Status = Result<void>;

/// Converts a redis::Result to a relay::Result (see the kind mapping above).
template <typename T>
relay::Result<T> toRelay(Result<T> result) {
  if (!result.ok()) return result.error().toRelay();
  return std::move(result).value();
}

inline relay::Status toRelay(const Status& status) {
  if (!status.ok()) return status.error().toRelay();
  return {};
}

}  // namespace relay::redis
