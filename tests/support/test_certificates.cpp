#include "support/test_certificates.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>

namespace relay::testing {
namespace {

// Runs a shell command line (all arguments are our own temp paths); output goes to a log.
Status run(const std::string& dir, const std::string& command) {
  const std::string line = "cd '" + dir + "' && " + command + " >>openssl.log 2>&1";
  if (std::system(line.c_str()) != 0) {
    std::ifstream log(dir + "/openssl.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    return Error::io("openssl failed: " + command + "\n" + text);
  }
  return {};
}

}  // namespace

Result<TestCertificates> TestCertificates::create() {
  std::string dir = (std::filesystem::temp_directory_path() / "relay-pki-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return Error::io("mkdtemp " + dir);
  TestCertificates pki(dir);
  const std::string days = " -days 1";
  for (const std::string ca : {"ca", "other-ca"}) {
    auto made = run(dir, "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + ca + ".key -out " +
                             ca + ".crt -subj '/CN=Relay test " + ca + "'" + days);
    if (!made) return made.error();
  }
  // The server's certificate names 127.0.0.1 and localhost, as a real one names its host.
  {
    std::ofstream ext(dir + "/server.ext");
    ext << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  }
  for (const auto& [name, extra] :
       {std::pair<std::string, std::string>{"server", " -extfile server.ext"}, {"client", ""}}) {
    auto key = run(dir, "openssl req -newkey rsa:2048 -nodes -keyout " + name + ".key -out " +
                            name + ".csr -subj '/CN=relay-test-" + name + "'");
    if (!key) return key.error();
    auto signed_cert = run(dir, "openssl x509 -req -in " + name + ".csr -CA ca.crt -CAkey ca.key " +
                                    "-CAcreateserial -out " + name + ".crt" + days + extra);
    if (!signed_cert) return signed_cert.error();
  }
  return pki;
}

TestCertificates::TestCertificates(TestCertificates&& other) noexcept
    : dir_(std::exchange(other.dir_, std::string())) {}

TestCertificates::~TestCertificates() {
  if (dir_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace relay::testing
