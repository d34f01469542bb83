#include "redis/sha1.h"

#include <array>
#include <cstdint>

// SHA-1 per FIPS 180-4 section 6.1. Written here because Redis names scripts by their SHA-1
// and the project has no crypto library dependency; this is not used for anything secret.

namespace relay::redis {
namespace {

constexpr uint32_t rotl(uint32_t value, int bits) {
  return (value << bits) | (value >> (32 - bits));
}

void processBlock(const unsigned char* block, std::array<uint32_t, 5>& h) {
  std::array<uint32_t, 80> w{};
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
           (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f = 0;
    uint32_t k = 0;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const uint32_t temp = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = temp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1Hex(std::string_view data) {
  std::array<uint32_t, 5> h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  size_t full = data.size() / 64;
  for (size_t i = 0; i < full; ++i) processBlock(bytes + 64 * i, h);

  // Padding: 0x80, zeros, then the message length in bits as a 64-bit big-endian number.
  std::array<unsigned char, 128> tail{};
  const size_t rest = data.size() % 64;
  for (size_t i = 0; i < rest; ++i) tail[i] = bytes[64 * full + i];
  tail[rest] = 0x80;
  const size_t tail_size = rest < 56 ? 64 : 128;
  const uint64_t bit_length = static_cast<uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) {
    tail[tail_size - 1 - i] = static_cast<unsigned char>(bit_length >> (8 * i));
  }
  processBlock(tail.data(), h);
  if (tail_size == 128) processBlock(tail.data() + 64, h);

  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(40);
  for (uint32_t word : h) {
    for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(word >> shift) & 0xF];
  }
  return out;
}

}  // namespace relay::redis
