#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace relay::runtime::image {

/// A streaming SHA-256 (OpenSSL's EVP): content digests of image blobs and layers. Move-only.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::string_view bytes);
  /// `sha256:<64 lowercase hex digits>`, the OCI digest form; the hash cannot be updated after.
  std::string digest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

/// The digest of `bytes` (`sha256:<hex>`).
std::string sha256Digest(std::string_view bytes);

/// Whether `digest` is `sha256:` followed by 64 lowercase hex digits, so its hex part is a safe
/// file name.
bool isSha256Digest(std::string_view digest);

}  // namespace relay::runtime::image
