/*
 * qjsws.h: internal header shared by the quickjs-websocket sources
 * (optimization switches, struct sbuf, struct conn, process-wide state).
 * Everything declared here is hidden: the only exported symbol of lws.so
 * is js_init_module (module.c).
 */
#ifndef QJSWS_H
#define QJSWS_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <quickjs.h>
#include <quickjs-libc.h>

#include "utf8_core.h"
#include "wsproto.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED(x) (void)(x)

#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------ */
/* optimization switches                                                */

enum {
    OPT_JOIN = 1 << 0,
    OPT_BUFFERED = 1 << 1,
    OPT_POOL = 1 << 2,
    OPT_SCHEDULER = 1 << 3,
    OPT_TRANSFER = 1 << 4,
    OPT_FRAGBUF = 1 << 5,
    OPT_STRSEND = 1 << 6,
    OPT_BATCH = 1 << 7,
    OPT_EVENTPOOL = 1 << 8,
    OPT_URLPARSE = 1 << 9,
    OPT_FRAMING = 1 << 10,
    OPT_STRRECV = 1 << 11,
    OPT_CONNECT = 1 << 12,
    OPT_ALL = (1 << 13) - 1,
};

extern unsigned g_opts; /* set once, at module load */

/* the largest message accepted (bytes); QJSWS_MAX_MESSAGE or max_message() */
#define MAX_MESSAGE_DEFAULT ((size_t)256 << 20)
#define MAX_MESSAGE_LIMIT ((size_t)INT32_MAX) /* QuickJS' largest ArrayBuffer */
extern size_t g_max_message;

#define OPT(x) (g_opts & (x))

/* ------------------------------------------------------------------ */
/* send buffer (pool.c)                                                   */

/*
 * A send buffer is a struct sbuf header followed by LWS_PRE bytes of headroom
 * and the payload.  The capacity of a pool class counts payload bytes only,
 * so a class of 65536 really holds a 64 KiB message (the headroom is extra).
 */
typedef struct sbuf {
    struct sbuf *next;
    size_t len;     /* payload length */
    int8_t cls;     /* pool class, -1 for a plain malloc */
    uint8_t text;
    uint8_t data[]; /* LWS_PRE headroom + payload */
} sbuf;

/* ------------------------------------------------------------------ */
/* global state                                                           */

extern JSClassID js_lws_handle_class_id;
extern JSClassID js_lws_conn_class_id;

typedef struct conn conn;

struct qjsws_globals {
    struct lws_context *ctx;
    JSContext *jsctx;
    JSValue handle;      /* weak: the handle object (not counted) */
    int epfd;
    int nfds;            /* lws sockets currently registered */
    int nconns;          /* live connections */
    int destroying;
    uint64_t services, service_fds, ticks;
    uint64_t own_writes, own_reads;
    JSRuntime *rt;
    JSValue evfn;        /* WebSocket.prototype._event(kind, a, b, c, d), this = the WebSocket */
    JSValue msgfn;       /* WebSocket.prototype._emitMessage(data), this = the WebSocket */
    int in_service;      /* depth: inside service()/service_fd()/tick() */
    int connected;       /* connect() was called inside this service call */
    int ep_registered;   /* batch: the epoll fd is registered with qjs */
    int dispatch_depth;  /* depth: inside an event dispatch or microtask checkpoint */
    conn *dirty;         /* "framing" conns with output to flush / to kill */
    conn *handover;      /* conns whose lws rx is paused at a message end (frame.c) */
    conn *bdirty;        /* watched conns whose queued bytes changed since published */
    int lws_in;          /* inside an lws service call and not in our callback: what
                          * asks for POLLOUT now is lws itself (conn.c, pings) */
    conn *pong_c;        /* lws asked for POLLOUT for this conn's pong: pause it */
    JSAtom atom_buffered; /* "bufferedAmount" */
};
extern struct qjsws_globals G; /* loop.c */

/* "framing": fd -> conn for the sockets whose I/O we do ourselves */
#define FDMAP_MAX 4096
extern conn *g_fdmap[FDMAP_MAX]; /* frame.c */

/* ------------------------------------------------------------------ */
/* connection                                                             */

enum { ST_CONNECTING, ST_OPEN, ST_CLOSING, ST_CLOSED };

struct conn {
    struct lws *wsi;
    JSContext *jsctx;
    JSValue self;      /* strong ref held while the wsi lives */
    JSValue ws;        /* the WebSocket: `this` of every event (released at detach) */
    int state;
    /* send queue */
    sbuf *qhead, *qtail;
    size_t qbytes;
    /* opt "buffered": ws has an own bufferedAmount data property mirroring
     * the queued bytes (since its first read, see js_conn_watch) */
    int watch;
    int bdirty;        /* on G.bdirty: the value may differ from `pub` */
    struct conn *bnext;
    size_t pub;        /* the value the property holds */
    /* close bookkeeping */
    int close_requested;
    int close_code;
    char close_reason[124];
    size_t close_reason_len;
    int peer_closed;
    int peer_code;
    char peer_reason[128];
    size_t peer_reason_len;
    int fail_code; /* the connection was failed with this code (conn_fail) */
    int closed_dispatched;
    int aborted;
    uint32_t u8;       /* UTF-8 validation state of the text message (utf8_stream) */
    size_t msg_len;    /* bytes of the current data message so far */
    /* receive accumulator (opt "join") */
    uint8_t *rx;
    size_t rxlen, rxcap;
    /* UTF-16 of a long received text, reused by the next one (opt "strrecv") */
    text_scratch t16;
    int t16_stream; /* this text is validated and decoded as it arrives */
    char protocol[128];
    int secure;
    /* opt "framing": our own RFC 6455 framing on the raw socket (ws:// only) */
    int fd;
    int own;           /* tx: we frame, mask and write the socket */
    int own_rx;        /* rx: we read and parse the socket (set together with own) */
    int hwait;         /* waiting for lws to reach a message end to hand over */
    int hpaused;       /* lws rx paused at a message end, on G.handover */
    struct conn *hnext;
    struct oblk *ohead, *otail; /* queued frames, written with one sendmsg */
    size_t obytes;
    int dirty;         /* on G.dirty: flush (and maybe kill) after service */
    struct conn *dnext;
    int close_sent;    /* our close frame is written (lws path) or queued (own) */
    int pong_wait;     /* lws path: lws' parser paused until its pong is written */
    int tx_failed;     /* own: a socket write failed, the queue was dropped */
    int kill_pending;
    struct wsp rxp;    /* own: the receive parser (wsproto.h) */
    /* opt "connect": set up by us, no wsi (dial.c) */
    int raw;           /* from connect() until our socket is closed */
    int rawev;         /* the poll events registered for it (0: none) */
    struct dial *dial; /* while the opening handshake runs */
    int64_t deadline;  /* connect or close-ack timeout (ms, monotonic), 0: none */
};

/* the connection has a socket (lws' wsi, or our own) */
static inline int conn_live(const conn *c)
{
    return c->wsi != NULL || c->raw;
}

enum { EV_OPEN = 1, EV_CHUNK = 2, EV_ERROR = 3, EV_CLOSE = 4 };

/* what bufferedAmount reports: framed bytes not yet written ("framing"),
 * or messages queued in C (lws path) */
static inline size_t conn_buffered(const conn *c)
{
    return c->own ? c->obytes : c->qbytes;
}

/* the queued bytes of c changed: republish at the next point JS can look
 * (buf_publish) if its bufferedAmount is a watched data property */
static inline void buf_touch(conn *c)
{
    if (c->watch && !c->bdirty) {
        c->bdirty = 1;
        c->bnext = G.bdirty;
        G.bdirty = c;
    }
}

#pragma GCC visibility pop

#endif /* QJSWS_H */
