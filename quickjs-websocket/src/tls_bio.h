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

/* a session's side of the BIO (embedded in the session): its socket, its
 * unread bytes moved out of the shared buffer when another session read, and
 * the records of its last gathered burst that the socket did not take */
struct tls_bio {
    int fd;
    int gather;    /* records go to the shared output buffer (tls_bio_gather) */
    int full;      /* a send() found the socket full (cleared by the transport at POLLOUT) */
    int drained;   /* the last recv() took less than it asked for: the socket was empty */
    uint8_t *kept; /* or NULL */
    size_t kept_off, kept_len;
    uint8_t *out;  /* unsent records (or NULL), written before anything else */
    size_t out_off, out_len;
    uint64_t written, sent; /* record bytes OpenSSL wrote to the BIO; of them, sent */
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
/* the records OpenSSL writes from now on are gathered in an output buffer,
 * one for the process, and sent together by tls_bio_flush (or once it is
 * full): one send() per burst instead of one per record */
void tls_bio_gather(struct tls_bio *b);
/* the end of a burst: the gathered records and any held ones sent; what the
 * socket does not take is held for b (b->out), sent before b's next bytes.
 * 0 all sent, -1 and errno (EAGAIN: some held; anything else: broken) */
int tls_bio_flush(struct tls_bio *b);
/* how often a burst's records were held over (pool_stats()) */
uint64_t tls_bio_held_out(void);
/* how often unread bytes were moved out of the shared buffer (pool_stats()) */
uint64_t tls_bio_kept(void);

#pragma GCC visibility pop

#endif
