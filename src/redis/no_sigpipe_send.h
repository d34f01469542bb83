#pragma once

#include <string>

#include "redis/errors.h"

// hiredict and OpenSSL are declared, not included: see reply.h.
struct redictContext;
struct ssl_st;

namespace relay::redis {

// Writes to a Redis socket never raise SIGPIPE (docs/operations.md "Failures, health and
// metrics"):
// hiredict writes with send(2) without MSG_NOSIGNAL and OpenSSL's socket BIO with write(2), so
// a server that closed the connection would kill the process. Rather than touching the signal
// mask around every call (four system calls each) or the process-wide disposition (not a
// library's to change, and inherited by handlers), both write with send(MSG_NOSIGNAL): the write
// fails with EPIPE, which hiredict reports as an I/O error.

/// Makes hiredict write this plain (TCP or unix socket) context with send(MSG_NOSIGNAL). Call it
/// right after connecting, before any command. Not for a TLS context (see below).
void sendWithoutSigpipe(redictContext* context);

/// Makes OpenSSL write this established TLS session on `fd` with send(MSG_NOSIGNAL), in place of
/// the socket BIO hiredict gave it. kIo when OpenSSL cannot allocate the BIO.
Status sendWithoutSigpipe(ssl_st* ssl, int fd, const std::string& where);

}  // namespace relay::redis
