/*
 * The sessions our TLS transport resumes (tls_resume.c, g_tls_resume): the
 * newest resumable session per host and port, kept for the next connection
 * there.  Part of the TLS transport (tp_tls.c).
 */
#ifndef QJSWS_TLS_RESUME_H
#define QJSWS_TLS_RESUME_H

#include <openssl/ssl.h>

#pragma GCC visibility push(hidden)

/* a new session of a connection to host:port (OpenSSL's new-session callback:
 * a TLS 1.3 ticket, or a TLS 1.2 session at the handshake's end): 1 kept (the
 * reference is ours now), 0 not (resumption off, a host name too long, a
 * session that cannot be resumed) */
int tls_resume_keep(const char *host, int port, SSL_SESSION *sess);
/* with resumption on, the newest session kept for host:port, if any, offered
 * to ssl (before its handshake) */
void tls_resume_offer(SSL *ssl, const char *host, int port);
/* every kept session dropped (a new CA file; runtime teardown) */
void tls_resume_clear(void);

#pragma GCC visibility pop

#endif
