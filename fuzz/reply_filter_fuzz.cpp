// libFuzzer target: redis::ReplyFilter on arbitrary bytes from a hostile or broken server. The
// first bytes pick the limits and how the stream is split into reads. It must never crash;
// replies asked for without limits must come out byte for byte (whatever the bytes, but for a
// header the input ends in the middle of); with
// limits, when the input is well-formed RESP, the output must parse into as many replies, none
// holding a string longer than max_bulk.
#include <hiredict/hiredict.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "redis/reply_filter.h"

namespace {

// Complete replies in `bytes` (and whether hiredict took all of it without an error).
int countReplies(std::string_view bytes, bool& clean, std::size_t max_bulk) {
  redictReader* reader = redictReaderCreate();
  // The oracle must not allocate what a hostile header claims (2,000,000,000 elements): inputs
  // past this many elements per array are not judged.
  reader->maxelements = 4096;
  clean = redictReaderFeed(reader, bytes.data(), bytes.size()) == REDICT_OK;
  int replies = 0;
  while (clean) {
    void* raw = nullptr;
    if (redictReaderGetReply(reader, &raw) != REDICT_OK) {
      clean = false;
      break;
    }
    if (raw == nullptr) break;
    // Walk it: no string longer than max_bulk survives the limits.
    struct Walk {
      static bool ok(const redictReply* reply, std::size_t max) {
        if (reply->type == REDICT_REPLY_STRING && reply->len > max) return false;
        for (std::size_t i = 0; reply->type == REDICT_REPLY_ARRAY && i < reply->elements; ++i) {
          if (!ok(reply->element[i], max)) return false;
        }
        return true;
      }
    };
    if (!Walk::ok(static_cast<redictReply*>(raw), max_bulk)) std::abort();
    freeReplyObject(raw);
    ++replies;
  }
  redictReaderFree(reader);
  return replies;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  relay::redis::ReplyLimits limits;
  limits.max_bulk = data[0] % 64;
  limits.max_array_bytes = data[1] % 128;
  limits.max_elements = data[2] % 8;
  limits.kept = data[0] % 16;
  const std::size_t step = 1 + data[1] % 13;
  const std::string_view input(reinterpret_cast<const char*>(data) + 3, size - 3);

  relay::redis::ReplyFilter plain;
  for (int i = 0; i < 64; ++i) plain.expect(std::nullopt);
  std::string same;
  for (std::size_t at = 0; at < input.size(); at += step) plain.feed(input.substr(at, step), same);
  // A header still incomplete when the input ends is held back until its line is whole (at most
  // the type byte and 32 more): everything before it must have come out byte for byte.
  if (input.substr(0, same.size()) != same || input.size() - same.size() > 33) std::abort();

  relay::redis::ReplyFilter limited;
  for (int i = 0; i < 64; ++i) limited.expect(limits);
  std::string out;
  for (std::size_t at = 0; at < input.size(); at += step) limited.feed(input.substr(at, step), out);
  bool clean_in = false, clean_out = false;
  const int in_replies = countReplies(input, clean_in, static_cast<std::size_t>(-1));
  if (clean_in && !limited.confused()) {
    const int out_replies = countReplies(out, clean_out, limits.max_bulk);
    if (!clean_out || out_replies != in_replies) std::abort();
  }
  return 0;
}
