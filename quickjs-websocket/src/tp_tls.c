/*
 * The TLS transport: OpenSSL, non-blocking, over our own TCP socket, for
 * wss:// connections with our own handshake and framing above it (opt "tls").
 *
 * The socket is tp_tcp's: its open, retry, timeout, close and abandon are
 * called as they are.  This file watches the socket itself (tp_tcp_watch),
 * because what a read or a write waits for is OpenSSL's business: a read may
 * have to write first (an alert, a handshake message) and a write to read
 * first, and then the other readiness re-drives it.  Above, readiness is
 * reported as the layer above asked for it (POLLIN: read now, POLLOUT: write
 * now), whatever the socket's was.
 *
 * OpenSSL reads and writes the socket itself, through a socket BIO of ours
 * (tls_bio.c: one recv() into a 256 KiB buffer shared by the sessions, a
 * send() without SIGPIPE); its non-blocking retries map straight onto poll
 * events.  read() loops SSL_read until the caller's buffer is full or the BIO
 * meets an empty socket.  Writes: our framing's coalesced blocks, each in
 * records of up to 16 KiB written at once (partial writes); a block's tail
 * shorter than a record is joined with the next block's head in a staging
 * buffer, so a burst makes no short record in its middle.
 * SSL_MODE_RELEASE_BUFFERS: an idle connection holds neither buffer (OpenSSL
 * frees them when they are empty).
 *
 * The SSL_CTX is made at the first wss:// connection (not at start-up), and
 * again for the connections made after the CA file changed.  Certificate and
 * host name are always verified: the chain against the CA file or the system's
 * store, the name (SSL_set1_host) or IP address (X509_VERIFY_PARAM_set1_ip_asc)
 * against the certificate; SNI for names, not for IP literals; TLS 1.2 at
 * least; renegotiation refused (TLS 1.3 has none).
 */
#include "tp_tls.h"
#include "loop.h"
#include "opts.h"
#include "tls_bio.h"
#include "tls_resume.h"
#include "tp_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define TLS_RECORD 16384 /* the largest record's plaintext */
#define TLS_MARKS 64     /* SSL_writes of one gathered burst, at most (then it is sent) */

struct tls {
    SSL *ssl;
    short want;  /* what the layer above asked for (poll) */
    short hs;    /* the handshake waits for this; 0: done */
    short rd;    /* a read waits for POLLIN; POLLOUT: OpenSSL must write first;
                  * both: it holds records already (re-driven at once) */
    short wr;    /* a write waits for POLLOUT, or POLLIN: OpenSSL must read first */
    short more;  /* the last read filled the buffer: OpenSSL may hold more */
    short end;   /* a read met the end: 1 close_notify, -1 an error (errno: err) */
    int err;
    int fatal;   /* no close_notify of ours may follow (an error) */
    int port;    /* with host: which sessions it may resume (g_tls_resume) */
    size_t owed; /* plaintext OpenSSL took whose records the socket has not (held) */
    struct tls_bio sock; /* the socket as the session's BIO reads and writes it */
    char host[]; /* for the next address's attempt */
};

static struct {
    struct tp_up up;
    SSL_CTX *ctx;
    unsigned ctx_gen; /* the g_ca_gen it was made with */
    char why[256];    /* a failure's text (reported at once) */
    struct tls_stats st; /* (but kept, held_out: tls_bio.c counts them) */
    uint8_t stage[TLS_RECORD];
    /* a gathered burst's SSL_writes: the BIO's written count after each, and
     * the plaintext taken by then (tls_writev) */
    uint64_t mark_written[TLS_MARKS];
    size_t mark_plain[TLS_MARKS];
} T;

/* OpenSSL's new-session callback: the session kept for the next connection to
 * this host and port (tls_resume.c).  1: the reference is ours now */
static int new_session(SSL *ssl, SSL_SESSION *sess)
{
    struct tls *s = SSL_get_app_data(ssl);
    return s && tls_resume_keep(s->host, s->port, sess);
}

/* the BIO lost bytes of the session (tls_bio_init): its end, an error */
static void bytes_lost(struct tls_bio *b, int err)
{
    struct tls *s = container_of(b, struct tls, sock);
    s->end = -1;
    s->err = err;
    s->fatal = 1;
}

void tp_tls_init(const struct tp_up *up)
{
    T.up = *up;
    tls_bio_init(bytes_lost);
}

void tp_tls_destroy(void)
{
    tls_resume_clear();
    SSL_CTX_free(T.ctx);
    T.ctx = NULL;
    tls_bio_destroy();
}

void tp_tls_stats(struct tls_stats *st)
{
    *st = T.st;
    st->kept = tls_bio_kept();
    st->held_out = tls_bio_held_out();
}

/* what failed, for the error event: the certificate check's verdict, else
 * OpenSSL's first error, else the system call's */
static const char *failure(struct tls *s, const char *what, int sys)
{
    long v = s->ssl ? SSL_get_verify_result(s->ssl) : X509_V_OK;
    unsigned long e = ERR_peek_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    if (v != X509_V_OK)
        snprintf(T.why, sizeof(T.why), "%s: certificate verify failed: %s", what,
                 X509_verify_cert_error_string(v));
    else if (r)
        snprintf(T.why, sizeof(T.why), "%s: %s", what, r);
    else if (sys == ECONNREFUSED)
        snprintf(T.why, sizeof(T.why), "connection refused");
    else if (sys)
        snprintf(T.why, sizeof(T.why), "%s: %s", what, strerror(sys));
    else
        snprintf(T.why, sizeof(T.why), "%s: connection closed", what);
    ERR_clear_error();
    return T.why;
}

/* the context for new connections: made at the first one, and again when the
 * CA file changed (sessions hold a reference to theirs) */
static SSL_CTX *tls_ctx(const char **why)
{
    SSL_CTX *ctx;
    if (T.ctx && T.ctx_gen == g_ca_gen)
        return T.ctx;
    ERR_clear_error();
    ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        *why = "TLS: cannot make a context";
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    /* TLS 1.3's AES-128-GCM offered first, as browsers and BoringSSL do (OpenSSL's
     * own order puts AES-256-GCM first): 10 AES rounds a block instead of 14, and a
     * server that follows the client's order (OpenSSL's default) picks it */
    if (OPT(OPT_CIPHER) &&
        !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                       "TLS_CHACHA20_POLY1305_SHA256")) {
        *why = "TLS: cannot set the cipher suites";
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
#ifndef QJSWS_TLS_KEEP_BUFFERS /* (only to measure what it saves: bench/tls_idle_memory.py) */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
#endif
    /* sessions to resume are kept by host and port (new_session, tls_resume.c),
     * never in OpenSSL's own cache, which a client does not look up */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, new_session);
    if (g_ca_file ? SSL_CTX_load_verify_locations(ctx, g_ca_file, NULL) != 1
                  : SSL_CTX_set_default_verify_paths(ctx) != 1) {
        snprintf(T.why, sizeof(T.why), "TLS: cannot load the CA certificates of %s",
                 g_ca_file ? g_ca_file : "the system's store");
        ERR_clear_error();
        SSL_CTX_free(ctx);
        *why = T.why;
        return NULL;
    }
    tls_resume_clear(); /* (verified against the former CA file) */
    SSL_CTX_free(T.ctx);
    T.ctx = ctx;
    T.ctx_gen = g_ca_gen;
    return ctx;
}

static void tls_ready(void *opaque, int fd, short events, short revents);
static void tls_expired(void *opaque);

static const struct loop_handler tls_handler = { tls_ready, tls_expired };

/* register what the handshake, or the reads and writes the layer above wants,
 * wait for */
static void watch(struct tp *t)
{
    struct tls *s = t->tls;
    int ev = s->hs;
    if (!ev)
        ev = ((s->want & POLLIN) ? s->rd : 0) | ((s->want & POLLOUT) ? s->wr : 0);
    if (s->sock.out)
        ev |= POLLOUT; /* held records go out whoever waits for them */
    tp_tcp_watch(t, ev ? ev : POLLIN, &tls_handler);
}

/* what a read (s->rd) or a write (s->wr) now waits for; re-registered if it changed */
static void wait_for(struct tp *t, short *what, short events)
{
    if (*what != events) {
        *what = events;
        watch(t);
    }
}

/* the session of the current socket, set up for the host */
static int session(struct tp *t, const char **why)
{
    struct tls *s = t->tls;
    SSL_CTX *ctx = tls_ctx(why);
    unsigned char ip[16];
    int literal, ok;
    BIO *bio;
    SSL_free(s->ssl);
    s->ssl = NULL;
    tls_bio_drop(&s->sock); /* (a former socket's) */
    s->sock.fd = t->fd;
    if (!ctx)
        return -1;
    s->ssl = SSL_new(ctx);
    bio = s->ssl ? tls_bio_new(&s->sock) : NULL;
    if (!bio) {
        *why = failure(s, "TLS: cannot make a session", 0);
        return -1;
    }
    SSL_set_bio(s->ssl, bio, bio); /* (takes our one reference) */
    literal = inet_pton(AF_INET, s->host, ip) == 1 || inet_pton(AF_INET6, s->host, ip) == 1;
    if (literal) {
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s->ssl), s->host);
    } else {
        SSL_set_hostflags(s->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ok = SSL_set_tlsext_host_name(s->ssl, s->host) && SSL_set1_host(s->ssl, s->host);
    }
    if (!ok) {
        *why = failure(s, "TLS: cannot verify this host", 0);
        return -1;
    }
    SSL_set_app_data(s->ssl, s);
    tls_resume_offer(s->ssl, s->host, s->port);
    SSL_set_connect_state(s->ssl);
    s->hs = POLLOUT;
    s->rd = POLLIN;
    s->wr = POLLOUT;
    s->more = s->end = 0;
    s->fatal = 0;
    return 0;
}

/* one step of the handshake: 1 done, 0 waits (s->hs), -1 failed (*why) */
static int handshake(struct tp *t, const char **why)
{
    struct tls *s = t->tls;
    int r, e;
    ERR_clear_error();
    r = SSL_do_handshake(s->ssl);
    if (r == 1) {
        s->hs = 0;
        T.st.handshakes++;
        if (SSL_session_reused(s->ssl))
            T.st.resumed++;
        return 1;
    }
    e = SSL_get_error(s->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        s->hs = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return 0;
    }
    s->fatal = 1;
    *why = failure(s, "TLS handshake failed", e == SSL_ERROR_SYSCALL ? errno : 0);
    return -1;
}

/* nothing came back from this address yet: another one may do */
static int untouched(struct tls *s)
{
    return s->ssl && BIO_number_read(SSL_get_rbio(s->ssl)) == 0;
}

/* a session and the handshake's first step on the current socket and, while
 * that fails before the server said anything, on the next addresses: 0 under
 * way (or done), -1 none left (*why) */
static int attempt(struct tp *t, const char **why)
{
    for (;;) {
        if (session(t, why) < 0)
            return -1;
        if (handshake(t, why) >= 0)
            return 0;
        if (!untouched(t->tls) || tp_tcp.retry(t, why) < 0)
            return -1;
    }
}

static void tls_free(struct tp *t, int notify)
{
    struct tls *s = t->tls;
    if (!s)
        return;
    if (s->ssl) {
        /* close_notify (RFC 8446 6.1), once, if the session can still say it
         * (best effort: a full socket is not waited for) */
        if (notify && !s->hs && !s->fatal && !(SSL_get_shutdown(s->ssl) & SSL_SENT_SHUTDOWN))
            SSL_shutdown(s->ssl);
        ERR_clear_error();
        SSL_free(s->ssl);
    }
    tls_bio_drop(&s->sock);
    free(s);
    t->tls = NULL;
}

static void tls_abandon(struct tp *t)
{
    tls_free(t, 0);
    tp_tcp.abandon(t);
}

static int tls_open(struct tp *t, const char *host, int port, const char **why)
{
    size_t hl = strlen(host) + 1;
    struct tls *s;
    if (!tls_ctx(why))
        return -1;
    s = calloc(1, sizeof(*s) + hl);
    if (!s) {
        *why = "out of memory";
        return -1;
    }
    memcpy(s->host, host, hl);
    s->port = port;
    t->tls = s;
    if (tp_tcp.open(t, host, port, why) < 0) {
        tls_free(t, 0);
        return -1;
    }
    if (attempt(t, why) < 0) {
        tls_abandon(t);
        return -1;
    }
    return 0;
}

/* the upgrade failed before its response began: the next address, if the
 * server has not spoken TLS to us on this one */
static int tls_retry(struct tp *t, const char **why)
{
    if (!untouched(t->tls) || tp_tcp.retry(t, why) < 0)
        return -1;
    return attempt(t, why);
}

static void tls_close(struct tp *t, const char *why)
{
    tls_free(t, 1);
    tp_tcp.close(t, why); /* reports the connection gone: may free t */
}

static void tls_timeout(struct tp *t, int secs, const char *why)
{
    tp_tcp.timeout(t, secs, why);
}

static void tls_expired(void *opaque)
{
    struct tp *t = opaque;
    tls_close(t, t->deadline_why);
}

static void tls_poll(struct tp *t, int events)
{
    t->tls->want = (short)events;
    watch(t);
}

static void tls_ready(void *opaque, int fd, short events, short revents)
{
    struct tp *t = opaque;
    struct tls *s = t->tls;
    short up;
    UNUSED(fd);
    UNUSED(events);
    if (s->hs) {
        const char *why;
        int r = handshake(t, &why);
        if (r < 0 && untouched(s) && tp_tcp.retry(t, &why) == 0 && attempt(t, &why) == 0)
            r = 0; /* on the next address */
        if (r < 0) {
            tls_close(t, why);
            return;
        }
        s = t->tls;
        watch(t);
        if (r > 0 && (s->want & (POLLIN | POLLOUT)))
            T.up.io(t, (short)(s->want & (POLLIN | POLLOUT))); /* the upgrade goes on */
        return;
    }
    if (revents & POLLOUT)
        s->sock.full = 0;
    if (s->sock.out && (revents & POLLOUT)) {
        if (tls_bio_flush(&s->sock) < 0 && errno != EAGAIN) {
            s->fatal = 1;
            revents |= POLLERR; /* (the layer above finds out at its next write) */
        }
        if (!s->sock.out)
            watch(t);
    }
    up = revents & (POLLHUP | POLLERR);
    if ((s->want & POLLIN) && (revents & (s->rd | POLLHUP | POLLERR)))
        up |= POLLIN;
    if ((s->want & POLLOUT) && (revents & s->wr))
        up |= POLLOUT;
    if (up)
        T.up.io(t, up);
}

/* a read met the end before: again */
static ssize_t ended(struct tls *s)
{
    if (s->end > 0)
        return 0;
    errno = s->err;
    return -1;
}

/* The error queue empty before an SSL_read or SSL_write, as SSL_get_error()
 * needs.  Every failure here empties it after itself, so it nearly always is:
 * looking costs a tenth of clearing its 16 slots every time (ERR_clear_error,
 * about 840 instructions a call on OpenSSL 3.5.7, once per read and once per
 * write: 5 % of a 32-byte round trip over wss://). */
static inline void err_empty(void)
{
    if (ERR_peek_error())
        ERR_clear_error();
}

static ssize_t tls_read(struct tp *t, void *buf, size_t n)
{
    struct tls *s = t->tls;
    size_t got = 0;
    if (s->hs) {
        errno = EAGAIN;
        return -1;
    }
    if (s->end)
        return ended(s);
    s->more = 0;
    err_empty();
    while (got < n) {
        size_t k;
        int e;
        if (SSL_read_ex(s->ssl, (char *)buf + got, n - got, &k)) {
            got += k;
            /* the BIO's last recv() emptied the socket and neither it nor
             * OpenSSL holds a byte more: stop, as a short read over ws://
             * does, instead of one more recv() only to hear EAGAIN (the
             * loop's POLLIN is level-triggered: it announces what comes) */
            if (got < n && s->sock.drained && !tls_bio_held(&s->sock) && !SSL_has_pending(s->ssl)) {
                wait_for(t, &s->rd, POLLIN);
                return (ssize_t)got;
            }
            continue;
        }
        e = SSL_get_error(s->ssl, 0);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            short rd = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
            if (rd == POLLOUT)
                T.st.rd_want_write++;
            wait_for(t, &s->rd, rd);
            if (got)
                return (ssize_t)got;
            errno = EAGAIN;
            return -1;
        }
        /* the end: close_notify, or anything else (a TCP end without close_notify
         * is a truncation, RFC 8446 6.1: an error) */
        if (e == SSL_ERROR_ZERO_RETURN) {
            s->end = 1;
        } else {
            s->end = -1;
            s->err = e == SSL_ERROR_SYSCALL && errno && errno != EAGAIN ? errno : ECONNRESET;
            s->fatal = 1;
            ERR_clear_error();
        }
        return got ? (ssize_t)got : ended(s); /* (pending() says there is more) */
    }
    /* the buffer is full: OpenSSL, or our BIO, may hold complete records that
     * no POLLIN will announce.  The reader reads on; should it stop at its
     * bound, POLLOUT (ready unless the peer stops reading us) re-drives the
     * read, and so does POLLIN, as ever */
    if (tls_bio_held(&s->sock) || SSL_has_pending(s->ssl)) {
        s->more = 1;
        wait_for(t, &s->rd, POLLIN | POLLOUT);
    }
    return (ssize_t)got;
}

static int tls_pending(struct tp *t)
{
    struct tls *s = t->tls;
    return s && (s->end || s->more);
}

/* one SSL_write: > 0 bytes taken (a record), else -1 and errno */
static ssize_t write1(struct tp *t, const void *p, size_t len)
{
    struct tls *s = t->tls;
    size_t k;
    int e;
    if (SSL_write_ex(s->ssl, p, len, &k)) {
        wait_for(t, &s->wr, POLLOUT);
        return (ssize_t)k;
    }
    e = SSL_get_error(s->ssl, 0);
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
        short wr = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
        if (wr == POLLIN)
            T.st.wr_want_read++;
        wait_for(t, &s->wr, wr);
        errno = EAGAIN;
        return -1;
    }
    errno = e == SSL_ERROR_SYSCALL && errno && errno != EAGAIN ? errno : EPIPE;
    s->fatal = 1;
    ERR_clear_error();
    return -1;
}

/*
 * Gather: the blocks in records.  A record never spans blocks, except that a
 * block's tail shorter than a record is joined with what follows (copied
 * into the staging buffer): a burst of whole 64 KiB frames would otherwise
 * make a record of 14 bytes per frame.  Retrying a blocked write is safe:
 * the queue's head is the same until a write succeeds (blocks only grow at
 * the end), so the same bytes are offered again (ACCEPT_MOVING_WRITE_BUFFER:
 * from wherever they are now).
 *
 * With "tlsgather" the records of the call go out with one send() at its end
 * (tls_bio.c).  Plaintext whose records the socket did not take is not
 * reported written (s->owed): the queue keeps it, so bufferedAmount counts
 * it, the framing waits for POLLOUT and calls again, and a close frame is
 * not taken for sent while its record is held.  The next call sends the held
 * records first, then reports those bytes (the queue's same head) written
 * without offering them to OpenSSL again.
 */
static ssize_t tls_writev(struct tp *t, const struct iovec *iov, int n)
{
    struct tls *s = t->tls;
    size_t total = 0, off = 0, confirmed;
    int i = 0, gather = OPT(OPT_TLSGATHER) != 0, marks = 0, fail = 0, err = 0;
    if (s->hs) {
        errno = EAGAIN;
        return -1;
    }
    if (s->owed || s->sock.out) {
        if (s->sock.out && s->sock.full) { /* (until POLLOUT: no send() in vain) */
            errno = EAGAIN;
            return -1;
        }
        if (tls_bio_flush(&s->sock) < 0) {
            if (errno != EAGAIN)
                s->fatal = 1;
            return -1;
        }
        /* taken already: moved over, not offered again */
        total = s->owed;
        s->owed = 0;
        while (i < n && total - off >= iov[i].iov_len) {
            off += iov[i].iov_len;
            i++;
        }
        if (i < n)
            off = total - off; /* (within iov[i]) */
        else
            total = off; /* (the queue holds no more of them: it was dropped) */
    }
    confirmed = total;
    if (gather && !(i == n - 1 && iov[i].iov_len - off <= TLS_RECORD))
        tls_bio_gather(&s->sock); /* (more than one record: else one send() anyway) */
    err_empty();
    while (i < n) {
        const uint8_t *p = (const uint8_t *)iov[i].iov_base + off;
        size_t len = iov[i].iov_len - off;
        ssize_t w;
        if (len < TLS_RECORD && i + 1 < n) {
            size_t m = 0;
            int j = i;
            size_t o = off;
            while (m < TLS_RECORD && j < n) {
                size_t c = iov[j].iov_len - o;
                if (c > TLS_RECORD - m)
                    c = TLS_RECORD - m;
                memcpy(T.stage + m, (const uint8_t *)iov[j].iov_base + o, c);
                m += c;
                j++;
                o = 0;
            }
            p = T.stage;
            len = m;
            T.st.staged++;
        }
        if (!len) {
            i++;
            off = 0;
            continue;
        }
        w = write1(t, p, len);
        if (w < 0) {
            fail = 1;
            err = errno;
            break;
        }
        total += (size_t)w;
        if (s->sock.gather) {
            T.mark_written[marks] = s->sock.written;
            T.mark_plain[marks] = total;
            if (++marks == TLS_MARKS) { /* sent now (the records so far) */
                if (tls_bio_flush(&s->sock) < 0) {
                    fail = 1;
                    err = errno;
                    break;
                }
                confirmed = total;
                marks = 0;
                tls_bio_gather(&s->sock);
            }
        }
        /* move on by w bytes, across blocks */
        while (w > 0 && i < n) {
            size_t c = iov[i].iov_len - off;
            if ((size_t)w < c) {
                off += (size_t)w;
                w = 0;
            } else {
                w -= (ssize_t)c;
                i++;
                off = 0;
            }
        }
    }
    if (s->sock.gather || s->sock.out) {
        int k;
        if (tls_bio_flush(&s->sock) < 0 && errno != EAGAIN) {
            s->fatal = 1;
            fail = 1;
            err = errno;
            confirmed = 0; /* (broken: nothing more matters) */
            marks = 0;
        } else if (!s->sock.out) {
            confirmed = total;
        } else {
            /* the plaintext of the records the socket took */
            for (k = 0; k < marks && T.mark_written[k] <= s->sock.sent; k++)
                confirmed = T.mark_plain[k];
            s->wr = POLLOUT;
            watch(t); /* (POLLOUT for the held records) */
        }
        s->owed = total - confirmed;
        total = confirmed;
    }
    if (!total && (fail || s->owed)) {
        errno = fail ? err : EAGAIN;
        return -1;
    }
    return (ssize_t)total;
}

static ssize_t tls_write(struct tp *t, const void *buf, size_t n)
{
    struct iovec iov = { (void *)(uintptr_t)buf, n };
    return tls_writev(t, &iov, 1);
}

/* our side is done: close_notify, then FIN; the peer's data is read on */
static int tls_shutdown(struct tp *t)
{
    struct tls *s = t->tls;
    if (s->hs || s->fatal)
        return -1;
    ERR_clear_error();
    if (SSL_shutdown(s->ssl) < 0) {
        ERR_clear_error();
        return -1;
    }
    return shutdown(t->fd, SHUT_WR);
}

void tp_tls_describe(SSL *ssl, struct tp_secinfo *out)
{
    int group = SSL_get_negotiated_group(ssl);
    const SSL_CIPHER *cipher = SSL_get_current_cipher(ssl);
    out->version = SSL_get_version(ssl);
    out->cipher = cipher ? SSL_CIPHER_get_name(cipher) : NULL;
    out->group = group > 0 ? SSL_group_to_name(ssl, group) : NULL;
    out->library = OpenSSL_version(OPENSSL_VERSION);
}

static int tls_secinfo(struct tp *t, struct tp_secinfo *out)
{
    struct tls *s = t->tls;
    if (!s || !s->ssl || s->hs || !SSL_is_init_finished(s->ssl))
        return -1;
    tp_tls_describe(s->ssl, out);
    return 0;
}

const struct tp_ops tp_tls = {
    .name = "tls", .open = tls_open, .retry = tls_retry,
    .read = tls_read, .write = tls_write, .writev = tls_writev, .pending = tls_pending,
    .poll = tls_poll, .shutdown = tls_shutdown, .timeout = tls_timeout, .close = tls_close,
    .abandon = tls_abandon, .release = NULL, .secinfo = tls_secinfo, .flags = TP_SMALL_READS,
};
