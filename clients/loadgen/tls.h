/*
 * wss://: the client side of TLS on OpenSSL, for conn.c's epoll loop. Sockets
 * stay non-blocking; OpenSSL reads and writes them itself, and tells through
 * the functions below when it must wait for the socket, in which direction.
 * A connection's TLS state is found by its socket descriptor.
 *
 * Trust is the CA file given with --ca only (no system store); the server's
 * name is checked against the URL's host (an IP address against the
 * certificate's IP names, a host name against its DNS names, and sent as SNI);
 * TLS 1.2 is the minimum.
 */
#ifndef LG_TLS_H
#define LG_TLS_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

struct url;

/* tls_read_records's outcomes */
enum tls_status {
	TLS_MORE,	/* the buffer is (nearly) full: read again */
	TLS_BLOCKED,	/* wait for the socket (tls_wants_out tells in which direction) */
	TLS_CLOSED,	/* the server's close_notify */
	TLS_FAILED,	/* an alert, a reset, a truncation... (tls_why) */
};

/* Set up the client context for the run; `resume`: offer the newest session. */
void tls_init(const char *ca_file, const struct url *u, int resume);

/* Free the context and the kept session (at exit). */
void tls_cleanup(void);

/* A TLS client on the socket (connecting or connected). */
void tls_attach(int fd);

/* Before close(fd): a close_notify if the session is up (best effort), free. */
void tls_detach(int fd);

/* Drive the handshake: 1 done, 0 waiting (tls_wants_out), -1 failed (tls_why). */
int tls_handshake(int fd);

/*
 * Decrypt into buf (cap bytes, at least one record's worth): the bytes
 * (*got, possibly with a status other than TLS_MORE) and what comes next.
 * No decrypted byte is left inside OpenSSL when it returns.
 */
enum tls_status tls_read_records(int fd, unsigned char *buf, size_t cap, size_t *got);

/*
 * Like writev(2), one SSL_write (the vector is gathered into one buffer up to
 * 256 KiB, a larger first item written as it is): the bytes written, or -1
 * with errno EAGAIN (wait: tls_wants_out) or the failure's (tls_why).
 */
ssize_t tls_write_gathered(int fd, const struct iovec *iov, int n);

/*
 * Should the connection wait for writability? Yes when TLS must write to go
 * on reading or with its handshake, or when `queued` data waits and the last
 * write did not wait for the server instead.
 */
int tls_wants_out(int fd, int queued);

/* The last failure on the socket, one line, or NULL. */
const char *tls_why(int fd);

/*
 * `, "tls": {...}` for the result line: what the first connection negotiated
 * (version, cipher, group, library), handshakes done and sessions resumed.
 */
const char *tls_result(void);

#endif
