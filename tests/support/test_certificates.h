#pragma once

#include <string>

#include "common/result.h"

namespace relay::testing {

/// A throw-away PKI made with the openssl CLI in a fresh temp dir (removed by the destructor):
/// a CA, a server certificate for 127.0.0.1 and localhost signed by it, a client certificate
/// signed by it, and a second, unrelated CA (to test a wrong REDIS_TLS_CA). RSA 2048, valid
/// for a day.
class TestCertificates {
 public:
  static Result<TestCertificates> create();
  ~TestCertificates();
  TestCertificates(TestCertificates&& other) noexcept;
  TestCertificates& operator=(TestCertificates&&) = delete;
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  std::string caCert() const { return dir_ + "/ca.crt"; }
  std::string serverCert() const { return dir_ + "/server.crt"; }
  std::string serverKey() const { return dir_ + "/server.key"; }
  std::string clientCert() const { return dir_ + "/client.crt"; }
  std::string clientKey() const { return dir_ + "/client.key"; }
  /// A CA that signed nothing here.
  std::string otherCaCert() const { return dir_ + "/other-ca.crt"; }
  const std::string& dir() const { return dir_; }

 private:
  explicit TestCertificates(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace relay::testing
