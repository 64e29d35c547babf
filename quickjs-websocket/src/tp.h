/*
 * Transports (layer 2): how a connection's bytes move, behind one table of
 * operations per connection (struct tp_ops), in the spirit of libwebsockets'
 * role operations.  Our framing and the HTTP upgrade above it (frame.c,
 * upgrade.c) reach the socket only through it:
 *   tp_tcp (tp_tcp.c)  our own TCP socket (ws:// with "connect");
 *   tp_tls (tp_tls.c)  OpenSSL over our own TCP socket (wss:// with "tls");
 *   tp_lws (tp_lws.c)  the socket of a libwebsockets connection, after the
 *                      hand-over to our framing (lws keeps the wsi).
 * A transport with a handshake of its own (TLS) connects in open(), says
 * EAGAIN to reads and writes until it is done (in either direction: a write
 * may wait for POLLIN), asks the loop for what it needs itself and reports
 * readiness upward through tp_up.io; bytes it holds that no POLLIN will
 * announce are reported by pending(), and the read loop drains them.
 *
 * Who frames a connection is a second, small table (struct framer): our
 * framing (fr_own, frame.c) over any transport, or libwebsockets' own
 * (fr_lws, fr_lws.c: the lws path, wss:// and "framing" off).  The state
 * machine and the binding send, close and fail through it and never ask which.
 *
 * struct tp is a connection's transport part; the layers above embed it
 * (struct fr, frame.h) and reach their own part from it with container_of.
 */
#ifndef QJSWS_TP_H
#define QJSWS_TP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "txq.h"

#pragma GCC visibility push(hidden)

struct tp;
struct tls;
struct lws;

/* what a secure connection negotiated (members NULL where not known; the
 * strings are the TLS library's, valid while the connection lives) */
struct tp_secinfo {
    const char *version, *cipher, *group, *library;
};

struct tp_ops {
    const char *name;
    /* start connecting to host:port: 0 under way (the caller may write at
     * once; EAGAIN until the transport is ready), -1 failed at once (*why;
     * nothing is left open or registered) */
    int (*open)(struct tp *t, const char *host, int port, const char **why);
    /* the attempt failed before a byte came back: try the next address;
     * 0 under way, -1 none left (*why: the last failure, if any) */
    int (*retry)(struct tp *t, const char **why);
    /* > 0 bytes moved, 0 the peer closed (read), -1 and errno: EAGAIN or
     * EWOULDBLOCK nothing now (readiness follows through tp_up.io), EINTR
     * again, anything else the connection is broken */
    ssize_t (*read)(struct tp *t, void *buf, size_t n);
    ssize_t (*write)(struct tp *t, const void *buf, size_t n);
    ssize_t (*writev)(struct tp *t, const struct iovec *iov, int n);
    /* bytes held inside the transport that no POLLIN will announce (TLS
     * records already decrypted); NULL: never any.  The readers (frame.c,
     * upgrade.c) read on while it says so; past the read loop's bound (16
     * reads a wakeup) the transport asks for service itself */
    int (*pending)(struct tp *t);
    /* the readiness the layer above wants to hear of (POLLIN, POLLOUT) */
    void (*poll)(struct tp *t, int events);
    /* our side is done (RFC 6455 7.1.1): what was written goes out, then the
     * end of our direction (TLS: close_notify, then TCP FIN); reads go on until
     * the peer closes.  0 done, -1 not possible (NULL: never): close instead */
    int (*shutdown)(struct tp *t);
    /* drop the connection, saying why, if it is not over within secs (0: no limit) */
    void (*timeout)(struct tp *t, int secs, const char *why);
    /* drop it now (outside any transport callback); tp_up.gone, or lws'
     * own reports, follow, perhaps at once: t may be freed */
    void (*close)(struct tp *t, const char *why);
    /* runtime teardown: let go of the socket, raise nothing */
    void (*abandon)(struct tp *t);
    /* the connection is detached: forget it */
    void (*release)(struct tp *t);
    /* over TLS, once its handshake is done: what it negotiated, 0; else -1
     * (not secure, or not yet).  NULL: a transport that never is */
    int (*secinfo)(struct tp *t, struct tp_secinfo *out);
    unsigned flags;
};

/* a kill asked for outside a service call happens in the transport's
 * writable notification (lws' writable callback), not at the end of the next
 * service call */
#define TP_WRITABLE_KILLS 1u
/* a read of a few bytes costs no system call of its own (TLS: records are
 * read into a buffer, and decrypted, whole): after a read into a message
 * (fr_up.sink), or near the end of a large frame, our framing reads only the
 * frame's rest and the next frame's header, so that a large payload is read
 * straight into its message from its first record on */
#define TP_SMALL_READS 2u

struct framer {
    /* one message: 0 (written, queued or, once closing, dropped), -1 out of memory */
    int (*send)(struct tp *t, int text, const uint8_t *p, size_t len);
    /* close() while open: our close frame (code 1005: no body), then wait */
    void (*close)(struct tp *t, int code, const char *reason, size_t rlen);
    /* close() while connecting: give the attempt up */
    void (*abort)(struct tp *t);
    /* fail the connection (RFC 6455 7.1.7): our close frame, then drop TCP */
    void (*fail)(struct tp *t, int code, const char *reason, size_t rlen);
    /* our half of a clean close is done: our close frame went out */
    int (*clean)(struct tp *t);
    /* bytes queued, as conn.buffered() reports them */
    size_t (*buffered)(struct tp *t);
};

struct tp {
    const struct tp_ops *ops;     /* the transport */
    const struct framer *fr;      /* who frames */
    struct txq q;                 /* what waits for the socket (either framer's) */
    int fd;                       /* the socket, -1: none (yet) */
    int sock;                     /* a socket of ours is open (tp_tcp: open() to close()) */
    int ev;                       /* the poll events it is registered with (0: none) */
    int64_t deadline;             /* tp_tcp: timeout() (ms, 0: none) ... */
    const char *deadline_why;     /* ... and what it reports */
    void *priv;                   /* the transport's own (tp_tcp: addresses while connecting) */
    struct tls *tls;              /* tp_tls: the TLS session */
    char protocol[128];           /* the subprotocol the server chose */
    struct lws *wsi;              /* tp_lws: lws' connection, while it lives */
    struct {                      /* tp_lws */
        int secure;
        int hwait;                /* waiting for lws to reach a message end to hand over */
        int hpaused;              /* lws rx paused at a message end, on the hand-over list */
        struct tp *hnext;
        int pong_wait;            /* lws' parser paused until its pong is written */
        int close_sent;           /* our close frame, written with lws_write() */
    } lws;
};

/* the connection has a socket (ours, or lws' wsi) */
static inline int tp_live(const struct tp *t)
{
    return t->sock || t->wsi != NULL;
}

/* The one upward interface of the transport layer: what transports report to
 * the layers above (set at init by service.c, the route in its header). */
struct tp_up {
    /* the socket is ready for the side that frames it (upgrade.c: the upgrade
     * while it runs, then our framing) */
    void (*io)(struct tp *t, short revents);
    /* our socket is closed (tp_tcp): report, let go of JS (the state
     * machine); may free t.  why: a connection that never opened, why not */
    void (*gone)(struct tp *t, const char *why);
    /* what libwebsockets reports of the connections it sets up or frames (tp_lws.c, fr_lws.c) */
    struct {
        unsigned (*status)(struct tp *t);                      /* LWS_ST_* (state machine) */
        size_t (*close_body)(struct tp *t, uint8_t out[125]); /* our close frame's body (state machine) */
        void (*established)(struct tp *t);                     /* the handshake succeeded: state open, no event yet */
        void (*opened)(struct tp *t);                          /* ... then the open event */
        /* a chunk of a data message lws parsed (as struct wsp_cb's data); < 0:
         * the connection was failed (the binding's receive path) */
        int (*receive)(struct tp *t, const uint8_t *p, size_t n, int first, int final, int binary,
                       size_t remain);
        /* the peer's close frame: 0 recorded, or the code the connection was
         * failed with (state machine) */
        int (*peer_close)(struct tp *t, const uint8_t *p, size_t n);
        void (*error)(struct tp *t, const char *why); /* the connection could not be set up */
        void (*closed)(struct tp *t);                 /* the TCP connection ended */
        void (*destroyed)(struct tp *t);              /* the wsi is gone: let go (may free t) */
        /* our framing, once handed over (frame.c): lws' writable callback (0, or
         * -1: close), and the hand-over itself */
        int (*writable)(struct tp *t);
        void (*take)(struct tp *t);
    } lws;
};

/* read, write, writev of the transports whose bytes go straight to the socket t->fd */
static inline ssize_t tp_fd_read(struct tp *t, void *buf, size_t n)
{
    return recv(t->fd, buf, n, MSG_DONTWAIT);
}

static inline ssize_t tp_fd_write(struct tp *t, const void *buf, size_t n)
{
    return send(t->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static inline ssize_t tp_fd_writev(struct tp *t, const struct iovec *iov, int n)
{
    struct msghdr mh;
    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = (struct iovec *)(uintptr_t)iov;
    mh.msg_iovlen = (size_t)n;
    return sendmsg(t->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

#pragma GCC visibility pop

#endif
