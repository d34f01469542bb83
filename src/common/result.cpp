#include "common/result.h"

namespace relay {

const char* errorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return "invalid argument";
    case ErrorKind::kNotFound:
      return "not found";
    case ErrorKind::kUnavailable:
      return "unavailable";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kIo:
      return "i/o error";
    case ErrorKind::kInternal:
      return "internal error";
  }
  return "unknown error";
}

}  // namespace relay
