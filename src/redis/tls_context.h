#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/c_free.h"
#include "redis/endpoint.h"
#include "redis/errors.h"

// OpenSSL and hiredict are declared, not included: see reply.h.
struct ssl_ctx_st;
struct redictContext;
extern "C" void SSL_CTX_free(ssl_ctx_st* context);

namespace relay::redis {

/// The client side of TLS for one `rediss://` endpoint: an OpenSSL context holding the CA, the
/// optional client certificate and key, and peer verification (chain AND host name). Built once
/// per Connection::create and shared by the links it opens. Thread-safe after create().
class TlsContext {
 public:
  /// Loads the files of `settings`. Fails with kConfig naming the file and OpenSSL's reason
  /// (missing, unreadable, not PEM, key not matching the certificate).
  static Result<std::shared_ptr<TlsContext>> create(const TlsSettings& settings);

  /// Runs the TLS handshake on the connected `context`, with SNI and the certificate checked
  /// against settings.server_name, or else `host` (a name or an IP address). On success the
  /// hiredict context owns the session. A certificate that does not verify is kConfig (with
  /// the reason: unknown CA, expired, wrong name); a failed exchange is kIo.
  Status handshake(redictContext* context, const std::string& host, const std::string& where) const;

  /// After a failed first command on a fresh TLS link: the alert the server sent, as kConfig
  /// (e.g. a client certificate is required), or nullopt when OpenSSL saw no alert.
  std::optional<Error> serverRefusal(const std::string& where) const;

  /// Whether a client certificate is configured.
  bool hasClientCertificate() const { return !settings_.cert_file.empty(); }

 private:
  explicit TlsContext(TlsSettings settings, CHandle<ssl_ctx_st, SSL_CTX_free> context)
      : settings_(std::move(settings)), context_(std::move(context)) {}

  TlsSettings settings_;
  CHandle<ssl_ctx_st, SSL_CTX_free> context_;
};

}  // namespace relay::redis
