#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace relay {

/// Broad classes of failure that callers switch on; the message is for people only.
enum class ErrorKind {
  kInvalidArgument,  // bad input from a user, a template, a producer or a flag
  kNotFound,         // the named thing does not exist
  kUnavailable,      // a dependency cannot serve now (Redis down, no bwrap, image missing)
  kTimeout,          // a deadline passed
  kIo,               // an operating-system call failed
  kInternal,         // a bug or an unexpected reply from a peer
};

/// Human-readable name of an error kind ("invalid argument", ...).
const char* errorKindName(ErrorKind kind);

/// A failure crossing a module boundary: a kind to switch on and a message to show.
struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;

  static Error invalid(std::string message) {
    return {ErrorKind::kInvalidArgument, std::move(message)};
  }
  static Error notFound(std::string message) { return {ErrorKind::kNotFound, std::move(message)}; }
  static Error unavailable(std::string message) {
    return {ErrorKind::kUnavailable, std::move(message)};
  }
  static Error io(std::string message) { return {ErrorKind::kIo, std::move(message)}; }
  static Error internal(std::string message) { return {ErrorKind::kInternal, std::move(message)}; }
};

/// A value or an error (relay::Error unless a module has its own typed error, as redis does).
/// Accessing the wrong alternative is a bug and asserts.
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(E error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const E& error() const {
    assert(!ok() && "Result::error() on a value");
    return std::get<1>(state_);
  }

 private:
  std::variant<T, E> state_;
};

/// Success or an error, for operations without a value.
template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const E& error() const {
    assert(!ok_ && "Result::error() on success");
    return error_;
  }

 private:
  E error_{};
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace relay
