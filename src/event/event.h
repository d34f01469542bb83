#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace relay::event {

/// The JSON type of a value.
enum class Type : std::uint8_t { kNull, kFalse, kTrue, kNumber, kString, kArray, kObject };

/// Deepest nesting of objects and arrays an event may have; the top-level object is depth 1.
inline constexpr int kMaxDepth = 64;

namespace detail {

// One entry of the flat, pre-order tape an event decodes into: 8 bytes, written with one
// store. An object is followed by its members, each a key (kString) then the value's subtree;
// an array by its elements. Trivial, so the tape is allocated without being cleared first.
struct Node {
  static constexpr std::uint32_t kMaxSize = (1u << 28) - 1;

  std::uint32_t meta;   // bits 0-2: Type; bit 3: text escaped; bits 4-31: size
  std::uint32_t where;  // kString, kNumber: start of the text; kArray, kObject: end

  static Node make(Type type, bool escaped, std::uint32_t size, std::uint32_t where) {
    return {static_cast<std::uint32_t>(type) | (escaped ? 8u : 0u) | (size << 4), where};
  }
  Type type() const { return static_cast<Type>(meta & 7u); }
  // kString: the text is in Event::unescaped_, not in the raw bytes.
  bool escaped() const { return (meta & 8u) != 0; }
  // kString, kNumber: bytes of text; kArray: elements; kObject: members.
  std::uint32_t size() const { return meta >> 4; }
  bool container() const { return (meta & 7u) >= static_cast<std::uint32_t>(Type::kArray); }
  // kArray, kObject: index of the first node after the container.
  std::uint32_t end() const { return where; }
  std::uint32_t offset() const { return where; }
};

double parseJsonNumber(std::string_view text);  // number.h

}  // namespace detail

class Event;

/// A read-only view of one JSON value of an Event. Cheap to copy; valid while the Event it
/// came from is alive and not moved from.
class Value {
 public:
  Type type() const { return node().type(); }
  bool isObject() const { return type() == Type::kObject; }
  bool isArray() const { return type() == Type::kArray; }
  bool isString() const { return type() == Type::kString; }
  bool isNumber() const { return type() == Type::kNumber; }
  bool isBool() const { return type() == Type::kTrue || type() == Type::kFalse; }
  bool isNull() const { return type() == Type::kNull; }

  /// The unescaped UTF-8 text of a string.
  std::string_view string() const;
  /// A number as a double, converted on each call: integers beyond 2^53 are rounded,
  /// magnitudes beyond the double range are ±infinity.
  double number() const {
    assert(isNumber() && "Value::number() on a non-number");
    return detail::parseJsonNumber(text());
  }
  bool boolean() const { return type() == Type::kTrue; }
  /// A number's token exactly as the event wrote it (`1.50`, `1e400`).
  std::string_view numberText() const {
    assert(isNumber() && "Value::numberText() on a non-number");
    return text();
  }
  /// Members of an object or elements of an array; 0 for scalars.
  std::size_t size() const;

  /// The value of the member named `key` (decode() rejects repeated keys, so there is at most
  /// one); nullopt when absent or when this is not an object.
  std::optional<Value> find(std::string_view key) const;

  /// Forward range over an object's (key, value) members or an array's elements.
  class Iterator;
  struct Range;
  Range members() const;   // empty unless an object
  Range elements() const;  // empty unless an array

  /// Index of this value in the event's tape; identifies it within its event.
  std::uint32_t index() const { return index_; }

 private:
  friend class Event;
  Value(const Event* event, std::uint32_t index) : event_(event), index_(index) {}
  const detail::Node& node() const;
  std::string_view text() const;  // a string's text or a number's token
  std::uint32_t next() const;     // index after this value's subtree

  const Event* event_;
  std::uint32_t index_;
};

/// Iterates members (key() is the member name) or elements (key() is empty). Holds the tape
/// and text pointers so that a walk over many members stays cheap.
class Value::Iterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Value;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = Value;

  Value operator*() const { return Value(event_, object_ ? index_ + 1 : index_); }
  std::string_view key() const {
    const detail::Node& key = tape_[index_];
    return object_
               ? std::string_view((key.escaped() ? unescaped_ : raw_) + key.offset(), key.size())
               : std::string_view();
  }
  Iterator& operator++() {
    const std::uint32_t at = object_ ? index_ + 1 : index_;
    const detail::Node& value = tape_[at];
    index_ = value.container() ? value.end() : at + 1;
    return *this;
  }
  bool operator==(const Iterator& other) const { return index_ == other.index_; }

 private:
  friend class Value;
  Iterator(const Event* event, std::uint32_t index, bool object);

  const Event* event_;
  const detail::Node* tape_;
  const char* raw_;
  const char* unescaped_;
  std::uint32_t index_;  // the key node of a member, or the element node
  bool object_;
};

struct Value::Range {
  Iterator first;
  Iterator last;
  Iterator begin() const { return first; }
  Iterator end() const { return last; }
};

/// One external event: the raw bytes exactly as received (handlers get them verbatim, never
/// re-serialised) plus the parsed view the matcher reads. Immutable after decode(), so it can
/// be shared across threads.
class Event {
 public:
  /// An empty event, only to be assigned to: decode() makes the usable ones.
  Event() = default;
  Event(Event&&) noexcept = default;
  Event& operator=(Event&&) noexcept = default;
  Event(const Event& other) { *this = other; }
  Event& operator=(const Event& other) {
    if (this != &other) {
      raw_ = other.raw_;
      unescaped_ = other.unescaped_;
      tape_size_ = other.tape_size_;
      tape_ = std::make_unique_for_overwrite<detail::Node[]>(tape_size_);
      std::copy(other.tape_.get(), other.tape_.get() + tape_size_, tape_.get());
    }
    return *this;
  }

  /// The bytes decode() was given, unchanged.
  const std::string& raw() const { return raw_; }
  /// The top-level object.
  Value root() const { return Value(this, 0); }

  /// Gives the raw bytes back (to reuse their buffer) and leaves the event empty: only
  /// destruction or assignment may follow.
  std::string takeRaw() && {
    tape_.reset();
    tape_size_ = 0;
    return std::move(raw_);
  }

 private:
  friend class Value;
  friend class Decoder;

  std::string raw_;
  std::string unescaped_;  // text of the strings that contained escapes
  std::unique_ptr<detail::Node[]> tape_;
  std::uint32_t tape_size_ = 0;
};

/// Spare capacity decode() needs after the bytes; a `raw` string with at least this much
/// (`reserve(size + kDecodePadding)`) is parsed without being reallocated.
inline constexpr std::size_t kDecodePadding = 16;

/// Parses an event: RFC 8259 JSON whose top level is an object, valid UTF-8 (escapes included:
/// a lone surrogate is invalid), nested at most kMaxDepth deep, no object with a key twice
/// (compared after unescaping: `"r\u006fle"` repeats `"role"`). Numbers of any size parse (as
/// doubles; out-of-range magnitudes become ±infinity). A single string, number or container
/// may hold up to 2^28 - 1 bytes or members. Errors are kInvalidArgument with the
/// byte offset and what was expected.
Result<Event> decode(std::string raw);

/// Why decodeLocated() refused an event: where (a byte offset into the raw bytes: the first
/// offending byte, the start of a top-level value that is not an object, the end of an empty
/// input) and what was wrong or expected.
struct DecodeError {
  std::size_t offset = 0;
  std::string message;       // without the offset
  bool json_syntax = false;  // invalid RFC 8259 (rather than valid JSON that is not an event)

  /// The message decode() gives: `invalid JSON at byte N: ...` for syntax errors.
  std::string toString() const;
};

/// decode() with the error's byte offset kept apart from its message, for callers that point
/// at the offending byte themselves (`relay publish` with --lines).
Result<Event, DecodeError> decodeLocated(std::string raw);

// --- inline definitions ---------------------------------------------------------------------

inline const detail::Node& Value::node() const { return event_->tape_[index_]; }

inline std::uint32_t Value::next() const {
  const detail::Node& n = node();
  return n.container() ? n.end() : index_ + 1;
}

inline std::string_view Value::string() const {
  assert(isString() && "Value::string() on a non-string");
  return text();
}

inline std::string_view Value::text() const {
  const detail::Node& n = node();
  const std::string& text = n.escaped() ? event_->unescaped_ : event_->raw_;
  return std::string_view(text.data() + n.offset(), n.size());
}

inline std::size_t Value::size() const {
  const detail::Node& n = node();
  return n.container() ? n.size() : 0;
}

inline Value::Range Value::members() const {
  const std::uint32_t first = isObject() ? index_ + 1 : index_;
  return {Iterator(event_, first, true), Iterator(event_, isObject() ? node().end() : first, true)};
}

inline Value::Range Value::elements() const {
  const std::uint32_t first = isArray() ? index_ + 1 : index_;
  return {Iterator(event_, first, false),
          Iterator(event_, isArray() ? node().end() : first, false)};
}

inline Value::Iterator::Iterator(const Event* event, std::uint32_t index, bool object)
    : event_(event),
      tape_(event->tape_.get()),
      raw_(event->raw_.data()),
      unescaped_(event->unescaped_.data()),
      index_(index),
      object_(object) {}

inline std::optional<Value> Value::find(std::string_view key) const {
  const detail::Node* tape = event_->tape_.get();
  if (tape[index_].type() != Type::kObject) return std::nullopt;
  const std::uint32_t end = tape[index_].end();
  std::uint32_t at = index_ + 1;
  while (at < end) {
    const detail::Node& name = tape[at];
    if (name.size() == key.size() &&
        std::string_view(
            (name.escaped() ? event_->unescaped_ : event_->raw_).data() + name.offset(),
            name.size()) == key) {
      return Value(event_, at + 1);
    }
    const detail::Node& value = tape[at + 1];
    at = value.container() ? value.end() : at + 2;
  }
  return std::nullopt;
}

}  // namespace relay::event
