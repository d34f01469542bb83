#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "common/quote_json.h"
#include "event/event.h"
#include "event/number.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace relay::event {
namespace {

using detail::isDigit;

static_assert(kDecodePadding >= 16, "the string scanner reads 16 bytes at a time");

// Offset of the first byte in p[0, 16) that ends a fast string scan — '"', '\\', a control
// character (NUL included, so the padding stops a scan) or a non-ASCII byte — or 16.
inline int firstSpecial(const char* p) {
#if defined(__SSE2__)
  const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // A signed comparison with 0x20 catches control characters and non-ASCII bytes at once.
  const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')),
                                                    _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\'))),
                                       _mm_cmplt_epi8(chunk, _mm_set1_epi8(0x20)));
  const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(special));
  return mask == 0 ? 16 : std::countr_zero(mask);
#else
  for (int i = 0; i < 16; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return i;
  }
  return 16;
#endif
}

// Every structural character is above ' ', so one comparison settles compact JSON.
inline const char* skipSpace(const char* p) {
  if (static_cast<unsigned char>(*p) > ' ') return p;
  while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') ++p;
  return p;
}

void appendUtf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Length of the valid UTF-8 sequence starting at p (lead byte >= 0x80), or 0. Reading past the
// end is safe (padding) and fails there: NUL is no continuation byte.
int utf8Length(const char* p) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(p);
  const unsigned lead = bytes[0];
  unsigned low = 0x80, high = 0xBF;
  int length;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // at most U+10FFFF
  } else {
    return 0;
  }
  if (bytes[1] < low || bytes[1] > high) return 0;
  for (int i = 2; i < length; ++i) {
    if (bytes[i] < 0x80 || bytes[i] > 0xBF) return 0;
  }
  return length;
}

// Reads four hex digits at p into `out`; false when one is not a hex digit.
bool readHex4(const char* p, unsigned& out) {
  out = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = p[i];
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return false;
    }
    out = out * 16 + digit;
  }
  return true;
}

}  // namespace

/// A single-pass RFC 8259 parser writing an Event's tape. The raw bytes get kDecodePadding NUL
/// bytes appended while it runs, so the scanners need no bounds checks: a NUL is invalid
/// wherever it appears and stops every loop. Strings without escapes are not copied (the tape
/// points into the raw bytes) and numbers are only validated (Value::number() converts). The
/// cursor, the tape pointer and the counters live in locals of parseDocument() so that they
/// stay in registers: stores to the tape could otherwise alias members.
class Decoder {
 public:
  static Result<Event, DecodeError> decode(std::string raw) {
    Event event;
    const std::size_t size = raw.size();
    if (size >= std::numeric_limits<std::uint32_t>::max() - kDecodePadding) {
      return DecodeError{0, "event too large: " + std::to_string(size) + " bytes", false};
    }
    event.raw_ = std::move(raw);
    event.raw_.append(kDecodePadding, '\0');
    Decoder decoder(event, size);
    std::optional<DecodeError> error = decoder.run();
    event.raw_.resize(size);
    if (error) return std::move(*error);
    return event;
  }

 private:
  Decoder(Event& event, std::size_t size)
      : event_(event), begin_(event.raw_.data()), end_(begin_ + size) {}

  std::optional<DecodeError> run() {
    const char* p = skipSpace(begin_);
    if (p == end_) {
      return DecodeError{static_cast<std::size_t>(end_ - begin_),
                         "the event is empty; expected a JSON object", false};
    }
    const char first = *p;
    const char* start = p;
    p = parseDocument(p);
    if (p == nullptr) return failure();
    p = skipSpace(p);
    if (p != end_) {
      fail(p, "unexpected data after the top-level value");
      return failure();
    }
    if (first != '{') {
      // Only valid JSON gets here: "not an object" is the more useful message for it.
      const char* what = first == '['                   ? "an array"
                         : first == '"'                 ? "a string"
                         : first == 't' || first == 'f' ? "a boolean"
                         : first == 'n'                 ? "null"
                                                        : "a number";
      return DecodeError{static_cast<std::size_t>(start - begin_),
                         std::string("the event must be a JSON object, got ") + what, false};
    }
    return std::nullopt;
  }

  DecodeError failure() const { return DecodeError{error_at_, error_, !repeated_key_}; }

  // Records the first error; returns nullptr for `return fail(...)` in cursor-returning code.
  const char* fail(const char* at, const char* message) {
    if (error_ == nullptr) {
      error_ = message;
      error_at_ = static_cast<std::size_t>(std::min(at, end_) - begin_);
    }
    return nullptr;
  }

  // Parses the value at p (after whitespace) and everything nested in it; returns the cursor
  // after it, or nullptr on error. One loop over an explicit stack of open containers.
  const char* parseDocument(const char* p) {
    struct Open {
      std::uint32_t node;
      std::uint32_t count;
      std::uint32_t start;  // offset of the opening bracket, to point at a repeated key
      bool object;
    };
    Open stack[kMaxDepth];
    int depth = 0;
    std::uint32_t capacity = static_cast<std::uint32_t>((end_ - begin_) / 6 + 16);
    event_.tape_ = std::make_unique_for_overwrite<detail::Node[]>(capacity);
    detail::Node* tape = event_.tape_.get();
    std::uint32_t count = 0;

    const auto push = [&](detail::Node node) __attribute__((always_inline)) {
      if (count == capacity) {
        capacity *= 2;
        auto grown = std::make_unique_for_overwrite<detail::Node[]>(capacity);
        std::memcpy(grown.get(), tape, sizeof(detail::Node) * count);
        event_.tape_ = std::move(grown);
        tape = event_.tape_.get();
      }
      tape[count++] = node;
    };

    // A string at p (the opening quote); the cursor after its closing quote, or nullptr.
    const auto string = [&](const char* at) __attribute__((always_inline))->const char* {
      const char* start = ++at;
      while (true) {
        const int offset = firstSpecial(at);
        at += offset;
        if (offset == 16) continue;
        const auto c = static_cast<unsigned char>(*at);
        if (c == '"') break;
        if (c >= 0x80) {
          const int length = utf8Length(at);
          if (length == 0) return fail(at, "invalid UTF-8");
          at += length;
          continue;
        }
        if (c == '\\') {
          const std::uint32_t self = count;
          push(detail::Node{});
          at = escapedString(start, at, tape[self]);
          return at;
        }
        return fail(at, at >= end_ ? "unterminated string"
                                   : "control character in a string; it must be escaped");
      }
      if (static_cast<std::size_t>(at - start) > detail::Node::kMaxSize) {
        return fail(start, "string too large");
      }
      push(detail::Node::make(Type::kString, false, static_cast<std::uint32_t>(at - start),
                              static_cast<std::uint32_t>(start - begin_)));
      return at + 1;
    };

    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, validated only.
    const auto number = [&](const char* at) __attribute__((always_inline))->const char* {
      const char* start = at;
      if (*at == '-') ++at;
      if (*at == '0') {
        ++at;
        if (isDigit(*at)) return fail(at, "invalid number: leading zero");
      } else if (isDigit(*at)) {
        while (isDigit(*at)) ++at;
      } else {
        return fail(at, "invalid number; expected a digit");
      }
      if (*at == '.') {
        ++at;
        if (!isDigit(*at)) return fail(at, "invalid number; expected a digit after '.'");
        while (isDigit(*at)) ++at;
      }
      if ((*at | 0x20) == 'e') {
        ++at;
        if (*at == '-' || *at == '+') ++at;
        if (!isDigit(*at)) return fail(at, "invalid number; expected a digit in the exponent");
        while (isDigit(*at)) ++at;
      }
      if (static_cast<std::size_t>(at - start) > detail::Node::kMaxSize) {
        return fail(start, "number too long");
      }
      push(detail::Node::make(Type::kNumber, false, static_cast<std::uint32_t>(at - start),
                              static_cast<std::uint32_t>(start - begin_)));
      return at;
    };

    // The padding makes reading the word's length safe; a mismatch there is a NUL.
    const auto word = [&](const char* at, const char* text, std::size_t length, Type type)
                          __attribute__((always_inline))
                              ->const char* {
      if (std::memcmp(at, text, length) != 0) return fail(at, "invalid literal");
      push(detail::Node::make(type, false, 0, 0));
      return at + length;
    };

    const auto close = [&](const Open& open) __attribute__((always_inline))->bool {
      if (open.count > detail::Node::kMaxSize) return false;
      tape[open.node] =
          detail::Node::make(open.object ? Type::kObject : Type::kArray, false, open.count, count);
      return true;
    };

  value:
    switch (*p) {
      case '{':
      case '[': {
        if (depth == kMaxDepth) return fail(p, "nested deeper than 64 levels");
        const bool object = *p == '{';
        stack[depth++] = {count, 0, static_cast<std::uint32_t>(p - begin_), object};
        push(detail::Node{});  // completed by close()
        p = skipSpace(p + 1);
        if (*p == (object ? '}' : ']')) {
          ++p;
          close(stack[--depth]);  // an empty container always fits
          goto after_value;
        }
        if (object) goto key;
        goto value;
      }
      case '"':
        p = string(p);
        break;
      case 't':
        p = word(p, "true", 4, Type::kTrue);
        break;
      case 'f':
        p = word(p, "false", 5, Type::kFalse);
        break;
      case 'n':
        p = word(p, "null", 4, Type::kNull);
        break;
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        p = number(p);
        break;
      default:
        return fail(p, p >= end_ ? "unexpected end of input; expected a value"
                                 : "unexpected character; expected a value");
    }
    if (p == nullptr) return nullptr;
  after_value:
    if (depth == 0) {
      event_.tape_size_ = count;
      return p;
    }
    {
      Open& open = stack[depth - 1];
      ++open.count;
      // Compact JSON has the separator right after the value; whitespace is the slow path.
      if (static_cast<unsigned char>(*p) <= ' ') p = skipSpace(p);
      if (*p == ',') {
        p = skipSpace(p + 1);
        if (open.object) goto key;
        goto value;
      }
      if (*p == (open.object ? '}' : ']')) {
        if (!close(open)) return fail(p, "too many members or elements in one container");
        if (open.object && open.count > 1) {
          if (const std::uint32_t repeat = repeatedKey(open.node, open.count); repeat != 0) {
            return failRepeatedKey(open.node, open.start, repeat);
          }
        }
        ++p;
        --depth;
        goto after_value;
      }
      if (p >= end_) return fail(p, "unexpected end of input; expected ',' or a closing bracket");
      return fail(
          p, open.object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
    }
  key:
    if (*p != '"') {
      return fail(p, p >= end_ ? "unexpected end of input; expected a string key"
                               : "expected a string key");
    }
    p = string(p);
    if (p == nullptr) return nullptr;
    if (*p != ':') {
      p = skipSpace(p);
      if (*p != ':') return fail(p, "expected ':' after an object key");
    }
    p = skipSpace(p + 1);
    goto value;
  }

  // The text of the key (or any string) node at `index`.
  std::string_view textOf(std::uint32_t index) const {
    const detail::Node& node = event_.tape_[index];
    const std::string& text = node.escaped() ? event_.unescaped_ : event_.raw_;
    return std::string_view(text.data() + node.offset(), node.size());
  }

  // The tape index of the first key of the complete object at `object` (of `members` members)
  // that repeats an earlier key of it (compared after unescaping), or 0 (index 0 is the
  // top-level object, never a key). Docs/patterns.md "Events": one reading of JSON, so the
  // matcher and every handler's JSON library see the same members. Checked once the object is
  // complete, off the parser's key path; an object of many keys is sorted: O(n log n), never
  // quadratic.
  std::uint32_t repeatedKey(std::uint32_t object, std::uint32_t members) const {
    const detail::Node* tape = event_.tape_.get();
    const std::uint32_t end = tape[object].end();
    struct Key {
      std::string_view text;
      std::uint32_t index;
    };
    constexpr std::uint32_t kFew = 32;
    if (members <= kFew) {
      // One of 128 bits per key, from its length and first and last bytes: only a key whose
      // bit an earlier key set is compared exactly, so the usual object compares none. Plain
      // arrays, left uninitialised: this runs for every object of every event.
      const char* text[kFew];
      std::uint32_t size[kFew];
      std::uint64_t seen[2] = {0, 0};
      const char* raw = event_.raw_.data();
      const char* unescaped = event_.unescaped_.data();
      std::uint32_t n = 0;
      for (std::uint32_t at = object + 1; at < end; ++n) {
        const detail::Node& key = tape[at];
        const char* data = (key.escaped() ? unescaped : raw) + key.offset();
        const std::uint32_t length = key.size();
        // The raw bytes' padding and the side buffer's terminator: data[0] is readable.
        const auto first = static_cast<unsigned char>(data[0]);
        const auto last = static_cast<unsigned char>(data[length == 0 ? 0 : length - 1]);
        const std::uint64_t mixed =
            (length | std::uint64_t{first} << 32 | std::uint64_t{last} << 40) *
            0x9E3779B97F4A7C15ULL;
        const unsigned bit = static_cast<unsigned>(mixed >> 57);
        const std::uint64_t mask = std::uint64_t{1} << (bit & 63);
        if ((seen[bit >> 6] & mask) != 0) {
          for (std::uint32_t i = 0; i < n; ++i) {
            if (size[i] == length && std::memcmp(text[i], data, length) == 0) return at;
          }
        }
        seen[bit >> 6] |= mask;
        text[n] = data;
        size[n] = length;
        const detail::Node& value = tape[at + 1];
        at = value.container() ? value.end() : at + 2;
      }
      return 0;
    }
    std::vector<Key> keys;
    keys.reserve(members);
    for (std::uint32_t at = object + 1; at < end;) {
      keys.push_back({textOf(at), at});
      const detail::Node& value = tape[at + 1];
      at = value.container() ? value.end() : at + 2;
    }
    // Sorted by text, then position: in each run of equal keys the second is a repeat, and the
    // earliest such one in the document is reported.
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
      return a.text < b.text || (a.text == b.text && a.index < b.index);
    });
    std::uint32_t first = 0;
    for (std::size_t i = 1; i < keys.size(); ++i) {
      if (keys[i].text == keys[i - 1].text && (i < 2 || keys[i - 2].text != keys[i].text) &&
          (first == 0 || keys[i].index < first)) {
        first = keys[i].index;
      }
    }
    return first;
  }

  // Records the repeated key at tape index `repeat` of the object opened at raw offset `start`,
  // pointing at the key's opening quote: the tape keeps no raw offset for escaped text, so the
  // object's bytes (already validated) are scanned again, on this error path only.
  const char* failRepeatedKey(std::uint32_t object, std::uint32_t start, std::uint32_t repeat) {
    const detail::Node* tape = event_.tape_.get();
    std::uint32_t ordinal = 0;
    for (std::uint32_t at = object + 1; at < repeat; ++ordinal) {
      const detail::Node& value = tape[at + 1];
      at = value.container() ? value.end() : at + 2;
    }
    const char* p = begin_ + start + 1;
    int depth = 0;
    bool expect_key = true;
    std::uint32_t member = 0;
    while (true) {
      const char c = *p;
      if (c == '"') {
        if (depth == 0 && expect_key) {
          if (member++ == ordinal) break;
          expect_key = false;
        }
        for (++p; *p != '"'; ++p) {
          if (*p == '\\') ++p;
        }
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        --depth;
      } else if (c == ',' && depth == 0) {
        expect_key = true;
      }
      ++p;
    }
    return failRepeatedKeyAt(p, textOf(repeat));
  }

  // Records "duplicate key "<text>" at byte N" for the key whose opening quote is at `at`.
  const char* failRepeatedKeyAt(const char* at, std::string_view key) {
    constexpr std::size_t kShownKeyBytes = 64;
    std::string shown;
    if (key.size() > kShownKeyBytes) {
      std::size_t cut = kShownKeyBytes;
      while (cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xC0) == 0x80) --cut;
      shown = quoteJson(std::string(key.substr(0, cut)) + "...");
    } else {
      shown = quoteJson(key);
    }
    error_text_ = "duplicate key " + shown + " at byte " + std::to_string(at - begin_);
    error_ = error_text_.c_str();
    error_at_ = static_cast<std::size_t>(at - begin_);
    repeated_key_ = true;
    return nullptr;
  }

  // The slow path of a string that started at `start` and has an escape at `at`: its text
  // goes, unescaped, to the event's side buffer. Returns the cursor after the closing quote.
  const char* escapedString(const char* start, const char* at, detail::Node& node) {
    std::string& out = event_.unescaped_;
    const std::size_t offset = out.size();
    out.append(start, static_cast<std::size_t>(at - start));
    while (true) {
      const auto c = static_cast<unsigned char>(*at);
      if (c == '"') break;
      if (c >= 0x80) {
        const int length = utf8Length(at);
        if (length == 0) return fail(at, "invalid UTF-8");
        out.append(at, static_cast<std::size_t>(length));
        at += length;
        continue;
      }
      if (c < 0x20) {
        return fail(at, at >= end_ ? "unterminated string"
                                   : "control character in a string; it must be escaped");
      }
      if (c != '\\') {
        out += static_cast<char>(c);
        ++at;
        continue;
      }
      const char escape = at[1];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out += escape;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp;
          if (!readHex4(at + 2, cp)) return fail(at, "invalid \\u escape; expected 4 hex digits");
          if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(at, "unpaired UTF-16 surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned low;
            if (at[6] != '\\' || at[7] != 'u' || !readHex4(at + 8, low) || low < 0xDC00 ||
                low > 0xDFFF) {
              return fail(at, "unpaired UTF-16 surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            at += 6;
          }
          appendUtf8(out, cp);
          at += 4;
          break;
        }
        default:
          return fail(at, at + 1 >= end_ ? "unterminated string" : "invalid escape sequence");
      }
      at += 2;
    }
    if (out.size() >= std::numeric_limits<std::uint32_t>::max() ||
        out.size() - offset > detail::Node::kMaxSize) {
      return fail(at, "string too large");
    }
    node = detail::Node::make(Type::kString, true, static_cast<std::uint32_t>(out.size() - offset),
                              static_cast<std::uint32_t>(offset));
    return at + 1;
  }

  Event& event_;
  const char* begin_;
  const char* end_;
  const char* error_ = nullptr;
  std::size_t error_at_ = 0;
  std::string error_text_;     // a message built at run time (a repeated key's)
  bool repeated_key_ = false;  // valid JSON, but not an event: the message says where
};

std::string DecodeError::toString() const {
  return json_syntax ? "invalid JSON at byte " + std::to_string(offset) + ": " + message : message;
}

Result<Event, DecodeError> decodeLocated(std::string raw) {
  return Decoder::decode(std::move(raw));
}

Result<Event> decode(std::string raw) {
  Result<Event, DecodeError> event = Decoder::decode(std::move(raw));
  if (!event.ok()) return Error::invalid(event.error().toString());
  return std::move(event).value();
}

}  // namespace relay::event
