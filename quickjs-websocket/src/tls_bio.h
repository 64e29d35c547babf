/*
 * The socket BIO of our TLS sessions (tls_bio.c): OpenSSL reads and writes a
 * session's socket through it, reads through one buffer for the process
 * (one recv() per wakeup), writes with send() and no SIGPIPE.  Part of the
 * TLS transport (tp_tls.c), which makes one for each session.
 */
#ifndef QJSWS_TLS_BIO_H
#define QJSWS_TLS_BIO_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/bio.h>

#pragma GCC visibility push(hidden)

/* a session's side of the BIO (embedded in the session): its socket, and its
 * unread bytes moved out of the shared buffer when another session read */
struct tls_bio {
    int fd;
    uint8_t *kept; /* or NULL */
    size_t kept_off, kept_len;
};

/* lost(b, err) is called, during another session's read, when b's unread
 * bytes could not be moved out of the shared buffer (err: ENOMEM): b's
 * stream has a gap, its session must fail */
void tls_bio_init(void (*lost)(struct tls_bio *b, int err));
/* runtime teardown: the BIO method and the shared buffer */
void tls_bio_destroy(void);

/* a BIO over b's socket (b->fd, set before its first read or write), or NULL */
BIO *tls_bio_new(struct tls_bio *b);
/* bytes held for b that no POLLIN will announce */
int tls_bio_held(const struct tls_bio *b);
/* b's unread bytes, wherever they are, dropped (its socket's end) */
void tls_bio_drop(struct tls_bio *b);
/* how often unread bytes were moved out of the shared buffer (pool_stats()) */
uint64_t tls_bio_kept(void);

#pragma GCC visibility pop

#endif
