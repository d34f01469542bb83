#include "runtime/image/sha256.h"

#include <openssl/evp.h>

#include "common/c_free.h"

namespace relay::runtime::image {

struct Sha256::Context {
  std::unique_ptr<EVP_MD_CTX, CFree<EVP_MD_CTX_free>> md{EVP_MD_CTX_new()};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->md.get(), EVP_sha256(), nullptr);
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(context_->md.get(), bytes.data(), bytes.size());
}

std::string Sha256::digest() {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->md.get(), hash, &size);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[hash[i] >> 4];
    out += kHex[hash[i] & 0xF];
  }
  return out;
}

std::string sha256Digest(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.digest();
}

bool isSha256Digest(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.substr(0, kPrefix.size()) != kPrefix || digest.size() != kPrefix.size() + 64) {
    return false;
  }
  for (const char c : digest.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace relay::runtime::image
