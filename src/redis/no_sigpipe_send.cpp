#include "redis/no_sigpipe_send.h"

#include <hiredict/hiredict.h>
#include <hiredict/sds.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace relay::redis {
namespace {

// hiredict's own redictNetWrite with MSG_NOSIGNAL: the same return contract (bytes written, 0 to
// try again, -1 with the context's error set) and errno left as send(2) set it, which
// errorFromContext reads to tell a timeout (SO_SNDTIMEO: EAGAIN) from an I/O error.
ssize_t contextSend(redictContext* context) {
  const ssize_t sent = ::send(context->fd, context->obuf, sdslen(context->obuf), MSG_NOSIGNAL);
  if (sent >= 0) return sent;
  const int saved_errno = errno;
  if ((saved_errno == EWOULDBLOCK && (context->flags & REDICT_BLOCK) == 0) ||
      saved_errno == EINTR) {
    return 0;
  }
  context->err = REDICT_ERR_IO;
  std::snprintf(context->errstr, sizeof context->errstr, "%s", std::strerror(saved_errno));
  errno = saved_errno;
  return -1;
}

// One table for every plain context: hiredict gives TCP and unix sockets the same default
// functions, of which only the write changes.
const redictContextFuncs* plainFunctions(const redictContextFuncs* hiredict_defaults) {
  static const redictContextFuncs functions = [hiredict_defaults] {
    redictContextFuncs copy = *hiredict_defaults;
    copy.write = contextSend;
    return copy;
  }();
  return &functions;
}

// OpenSSL's socket BIO write (sock_write) with MSG_NOSIGNAL.
int bioSend(BIO* bio, const char* data, int size) {
  const int fd = static_cast<int>(BIO_get_fd(bio, nullptr));
  errno = 0;
  const ssize_t sent = ::send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
  BIO_clear_retry_flags(bio);
  if (sent <= 0 && BIO_sock_should_retry(static_cast<int>(sent)) != 0) BIO_set_retry_write(bio);
  return static_cast<int>(sent);
}

// The socket BIO with bioSend as its write; everything else (read, ctrl, create, destroy) is
// the socket BIO's own. Built once, never freed (like OpenSSL's own methods).
const BIO_METHOD* socketMethod() {
  static const BIO_METHOD* method = []() -> const BIO_METHOD* {
    const BIO_METHOD* socket = BIO_s_socket();
    const int index = BIO_get_new_index();
    if (index == -1) return nullptr;  // no BIO type left: the TLS handshake reports it
    BIO_METHOD* own =
        BIO_meth_new(index | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "relay socket");
    if (own == nullptr) return nullptr;
    if (BIO_meth_set_write(own, bioSend) != 1 ||
        BIO_meth_set_read(own, BIO_meth_get_read(socket)) != 1 ||
        BIO_meth_set_puts(own, BIO_meth_get_puts(socket)) != 1 ||
        BIO_meth_set_ctrl(own, BIO_meth_get_ctrl(socket)) != 1 ||
        BIO_meth_set_create(own, BIO_meth_get_create(socket)) != 1 ||
        BIO_meth_set_destroy(own, BIO_meth_get_destroy(socket)) != 1) {
      BIO_meth_free(own);
      return nullptr;
    }
    return own;
  }();
  return method;
}

}  // namespace

void sendWithoutSigpipe(redictContext* context) { context->funcs = plainFunctions(context->funcs); }

Status sendWithoutSigpipe(ssl_st* ssl, int fd, const std::string& where) {
  const BIO_METHOD* method = socketMethod();
  BIO* bio = method != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) return Error{ErrorKind::kIo, where + ": TLS: cannot create a socket BIO"};
  // As SSL_set_fd does: the BIO does not own the descriptor (hiredict closes it). SSL_set_bio
  // frees the socket BIO hiredict installed; the record layer keeps what it has buffered.
  BIO_set_fd(bio, fd, BIO_NOCLOSE);
  SSL_set_bio(ssl, bio, bio);
  return {};
}

}  // namespace relay::redis
