#include "redis/tls_context.h"

#include <arpa/inet.h>
#include <hiredict/hiredict.h>
#include <hiredict/hiredict_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <string>

#include "redis/no_sigpipe_send.h"

namespace relay::redis {
namespace {

Error configError(std::string message) { return {ErrorKind::kConfig, std::move(message)}; }

// OpenSSL's reason for the last failure on this thread, or `fallback`.
std::string opensslReason(std::string_view fallback) {
  const unsigned long code = ERR_peek_last_error();
  const char* reason = code != 0 ? ERR_reason_error_string(code) : nullptr;
  ERR_clear_error();
  return reason != nullptr ? reason : std::string(fallback);
}

bool isIpAddress(const std::string& host) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// An alert the server sent (reasons from SSL_AD_REASON_OFFSET on are alerts), as kConfig.
std::optional<Error> alertFromServer(const std::string& where) {
  const unsigned long code = ERR_peek_last_error();
  if (code == 0 || ERR_GET_LIB(code) != ERR_LIB_SSL ||
      ERR_GET_REASON(code) < SSL_AD_REASON_OFFSET) {
    return std::nullopt;
  }
  const char* reason = ERR_reason_error_string(code);
  std::string text = reason != nullptr ? reason : "an alert";
  ERR_clear_error();
  std::string hint;
  if (text.find("certificate required") != std::string::npos ||
      text.find("handshake failure") != std::string::npos) {
    hint = " (does the server require a client certificate? give one with its key)";
  }
  return configError(where + ": the server refused the TLS session: " + text + hint);
}

}  // namespace

Result<std::shared_ptr<TlsContext>> TlsContext::create(const TlsSettings& settings) {
  ERR_clear_error();
  CHandle<ssl_ctx_st, SSL_CTX_free> context(SSL_CTX_new(TLS_client_method()));
  if (!context) return configError("TLS: cannot create an OpenSSL context: " + opensslReason(""));
  SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  if (!settings.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(context.get(), settings.ca_file.c_str(), nullptr) != 1) {
      return configError("TLS CA file '" + settings.ca_file +
                         "' cannot be loaded: " + opensslReason("not a PEM certificate bundle"));
    }
  } else if (SSL_CTX_set_default_verify_paths(context.get()) != 1) {
    return configError("TLS: the system's CA certificates cannot be loaded: " +
                       opensslReason("unknown reason"));
  }
  if (settings.cert_file.empty() != settings.key_file.empty()) {
    return configError("TLS: a client certificate and its key go together (got only the " +
                       std::string(settings.cert_file.empty() ? "key" : "certificate") + ")");
  }
  if (!settings.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(context.get(), settings.cert_file.c_str()) != 1) {
      return configError("TLS client certificate '" + settings.cert_file +
                         "' cannot be loaded: " + opensslReason("not a PEM certificate"));
    }
    if (SSL_CTX_use_PrivateKey_file(context.get(), settings.key_file.c_str(), SSL_FILETYPE_PEM) !=
        1) {
      return configError("TLS client key '" + settings.key_file +
                         "' cannot be loaded: " + opensslReason("not a PEM private key"));
    }
    if (SSL_CTX_check_private_key(context.get()) != 1) {
      return configError("TLS client key '" + settings.key_file +
                         "' does not match the certificate '" + settings.cert_file + "'");
    }
  }
  return std::shared_ptr<TlsContext>(new TlsContext(settings, std::move(context)));
}

Status TlsContext::handshake(redictContext* context, const std::string& host,
                             const std::string& where) const {
  ERR_clear_error();
  SSL* ssl = SSL_new(context_.get());
  if (ssl == nullptr) return Error{ErrorKind::kIo, where + ": SSL_new: " + opensslReason("")};
  const std::string& name = settings_.server_name.empty() ? host : settings_.server_name;
  if (isIpAddress(name)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, name.c_str());
    SSL_set1_host(ssl, name.c_str());
  }
  if (redictInitiateSSL(context, ssl) == REDICT_OK) {
    // The context owns ssl now. hiredict gave it a socket BIO, which writes with write(2).
    return sendWithoutSigpipe(ssl, context->fd, where);
  }
  const long verified = SSL_get_verify_result(ssl);
  SSL_free(ssl);
  if (verified != X509_V_OK) {
    ERR_clear_error();
    const std::string trust =
        settings_.ca_file.empty() ? "the system's CAs" : "the CA in '" + settings_.ca_file + "'";
    return configError(where + ": TLS: the server's certificate does not verify against " + trust +
                       " for the name '" + name + "': " + X509_verify_cert_error_string(verified));
  }
  if (auto alert = alertFromServer(where)) return *alert;
  return Error{ErrorKind::kIo, where + ": TLS handshake failed: " +
                                   std::string(context->errstr[0] ? context->errstr : "unknown")};
}

std::optional<Error> TlsContext::serverRefusal(const std::string& where) const {
  return alertFromServer(where);
}

}  // namespace relay::redis
