/*
 * quickjs-websocket: native half of a browser-style WebSocket client for the
 * stock QuickJS `qjs` interpreter, built on libwebsockets (external poll).
 *
 * One process-wide libwebsockets context is owned by a JS "handle" object
 * (created by init()).  Each connection is a JS "conn" object wrapping a
 * struct conn.  websocket.js provides the browser API on top of this.
 *
 * The eleven optimizations can be switched off at run time with the environment
 * variable QJSWS_DISABLE (comma separated short names, or "all"); see
 * README.md.  The switch state is read once, at module load.
 */
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

#define countof(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED(x) (void)(x)

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
    OPT_ALL = (1 << 11) - 1,
};

static const char *const opt_names[] = {
    "join", "buffered", "pool", "scheduler", "transfer",
    "fragbuf", "strsend", "batch", "eventpool", "urlparse", "framing",
};

static unsigned g_opts = OPT_ALL;

static unsigned parse_disable(const char *s)
{
    unsigned opts = OPT_ALL;
    while (s && *s) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        while (n && (*s == ' ' || *s == '\t')) {
            s++;
            n--;
        }
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        if (n == 3 && !strncasecmp(s, "all", 3)) {
            opts = 0;
        } else if (n) {
            size_t i;
            int found = 0;
            for (i = 0; i < countof(opt_names); i++) {
                if (strlen(opt_names[i]) == n && !strncasecmp(s, opt_names[i], n)) {
                    opts &= ~(1u << i);
                    found = 1;
                }
            }
            if (!found)
                fprintf(stderr, "quickjs-websocket: QJSWS_DISABLE: unknown name '%.*s'\n",
                        (int)n, s);
        }
        s = e ? e + 1 : NULL;
    }
    return opts;
}

#define OPT(x) (g_opts & (x))

/* ------------------------------------------------------------------ */
/* buffer pool (opt "pool")                                              */

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

#define POOL_CLASSES 4
static const size_t pool_cap[POOL_CLASSES] = { 256, 2048, 16384, 65536 };
static const int pool_count[POOL_CLASSES] = { 32, 16, 4, 2 };

static struct {
    void *slab[POOL_CLASSES];
    sbuf *free_list[POOL_CLASSES];
    int nfree[POOL_CLASSES];
    int total;
    uint64_t hits, misses;
    int inited;
} g_pool;

#define STACK_SEND_MAX 4096

static void pool_init(void)
{
    int c, i;
    if (g_pool.inited)
        return;
    for (c = 0; c < POOL_CLASSES; c++) {
        size_t bsz = sizeof(sbuf) + LWS_PRE + pool_cap[c];
        bsz = (bsz + 15) & ~(size_t)15;
        g_pool.slab[c] = malloc(bsz * (size_t)pool_count[c]);
        if (!g_pool.slab[c])
            continue;
        for (i = 0; i < pool_count[c]; i++) {
            sbuf *b = (sbuf *)((uint8_t *)g_pool.slab[c] + bsz * (size_t)i);
            b->cls = (int8_t)c;
            b->next = g_pool.free_list[c];
            g_pool.free_list[c] = b;
            g_pool.nfree[c]++;
            g_pool.total++;
        }
    }
    g_pool.inited = 1;
}

static void pool_destroy(void)
{
    int c;
    for (c = 0; c < POOL_CLASSES; c++) {
        free(g_pool.slab[c]);
        g_pool.slab[c] = NULL;
        g_pool.free_list[c] = NULL;
        g_pool.nfree[c] = 0;
    }
    g_pool.total = 0;
    g_pool.inited = 0;
}

static sbuf *sbuf_alloc(size_t len)
{
    sbuf *b;
    if (OPT(OPT_POOL) && g_pool.inited) {
        int c;
        for (c = 0; c < POOL_CLASSES; c++) {
            if (len <= pool_cap[c] && g_pool.free_list[c]) {
                b = g_pool.free_list[c];
                g_pool.free_list[c] = b->next;
                g_pool.nfree[c]--;
                g_pool.hits++;
                b->next = NULL;
                b->len = len;
                return b;
            }
        }
        g_pool.misses++;
    }
    b = malloc(sizeof(sbuf) + LWS_PRE + len + 1);
    if (!b)
        return NULL;
    b->next = NULL;
    b->len = len;
    b->cls = -1;
    return b;
}

static void sbuf_free(sbuf *b)
{
    if (!b)
        return;
    if (b->cls >= 0) {
        b->next = g_pool.free_list[b->cls];
        g_pool.free_list[b->cls] = b;
        g_pool.nfree[b->cls]++;
    } else {
        free(b);
    }
}

/* ------------------------------------------------------------------ */
/* UTF-8                                                                  */

/* strict RFC 3629 validation: no overlongs, no surrogates, <= U+10FFFF */
static int utf8_valid(const uint8_t *p, size_t len)
{
    const uint8_t *end = p + len;
    while (p < end) {
        if (!(*p & 0x80)) {
            /* ASCII fast path: 8 bytes at a time */
            while (end - p >= 8) {
                uint64_t w;
                memcpy(&w, p, 8);
                if (w & 0x8080808080808080ULL)
                    break;
                p += 8;
            }
            while (p < end && !(*p & 0x80))
                p++;
            continue;
        }
        uint8_t c = *p;
        if (c >= 0xc2 && c <= 0xdf) {
            if (end - p < 2 || (p[1] & 0xc0) != 0x80)
                return 0;
            p += 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
                return 0;
            if (c == 0xe0 && p[1] < 0xa0)
                return 0; /* overlong */
            if (c == 0xed && p[1] > 0x9f)
                return 0; /* surrogate */
            p += 3;
        } else if (c >= 0xf0 && c <= 0xf4) {
            if (end - p < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
                (p[3] & 0xc0) != 0x80)
                return 0;
            if (c == 0xf0 && p[1] < 0x90)
                return 0; /* overlong */
            if (c == 0xf4 && p[1] > 0x8f)
                return 0; /* > U+10FFFF */
            p += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* global state                                                           */

static JSClassID js_lws_handle_class_id;
static JSClassID js_lws_conn_class_id;

typedef struct conn conn;

static struct {
    struct lws_context *ctx;
    JSContext *jsctx;
    JSValue handle;      /* weak: the handle object (not counted) */
    int epfd;
    int nfds;            /* lws sockets currently registered */
    int nconns;          /* live connections */
    int destroying;
    uint64_t services, service_fds, ticks;
    uint64_t own_writes, own_reads;
    int in_service;      /* depth: inside service()/service_fd()/tick() */
    conn *dirty;         /* "framing" conns with output to flush / to kill */
} G = { .epfd = -1 };

/* "framing": fd -> conn for the sockets whose I/O we do ourselves */
#define FDMAP_MAX 4096
static conn *g_fdmap[FDMAP_MAX];

typedef struct {
    JSValue pollfn; /* (fd, mask) => void, mask: 1 read, 2 write, 0 remove */
} handle_data;

/* ------------------------------------------------------------------ */
/* connection                                                             */

enum { ST_CONNECTING, ST_OPEN, ST_CLOSING, ST_CLOSED };

struct conn {
    struct lws *wsi;
    JSContext *jsctx;
    JSValue self;      /* strong ref held while the wsi lives */
    JSValue evfn;      /* (kind, a, b, c) */
    JSValue msgfn;     /* (data) */
    int state;
    /* send queue */
    sbuf *qhead, *qtail;
    size_t qbytes;
    int qcount;
    /* close bookkeeping */
    int close_requested;
    int close_code;
    char close_reason[124];
    size_t close_reason_len;
    int peer_closed;
    int peer_code;
    char peer_reason[128];
    size_t peer_reason_len;
    int fail_code; /* set to close with this code from inside a callback */
    int closed_dispatched;
    int aborted;
    /* receive accumulator (opt "join") */
    uint8_t *rx;
    size_t rxlen, rxcap;
    char protocol[64];
    int secure;
    /* opt "framing": our own RFC 6455 framing on the raw socket (ws:// only) */
    int fd;
    int own;           /* tx: we frame, mask and write the socket */
    int own_rx;        /* rx: we read and parse the socket */
    struct oblk *ohead, *otail; /* queued frames, written with one sendmsg */
    size_t obytes;
    int dirty;         /* on G.dirty: flush (and maybe kill) after service */
    struct conn *dnext;
    int close_sent, kill_pending;
    int msg_op;        /* data message in progress: 0 none, 1 text, 2 binary */
    int msg_first;     /* next data chunk is the first of its message */
    uint8_t hdr[14];
    int hdrlen, hdrneed; /* hdrneed 0: between frames */
    int in_payload;
    int f_fin, f_op;
    uint64_t f_left;   /* payload bytes of the current frame still to come */
    uint8_t ctl[128];
    size_t ctllen;
};

enum { EV_OPEN = 1, EV_CHUNK = 2, EV_ERROR = 3, EV_CLOSE = 4 };

static int own_append(conn *c, int opcode, const uint8_t *p, size_t len);
static void own_kick(conn *c);

static void call_js(JSContext *ctx, JSValueConst fn, int argc, JSValueConst *argv)
{
    JSValue r = JS_Call(ctx, fn, JS_UNDEFINED, argc, argv);
    if (JS_IsException(r))
        js_std_dump_error(ctx);
    JS_FreeValue(ctx, r);
}

static void conn_dispatch_close(conn *c, int code, const char *reason, size_t rlen, int clean)
{
    JSContext *ctx = c->jsctx;
    JSValue argv[4];
    if (c->closed_dispatched)
        return;
    c->closed_dispatched = 1;
    c->state = ST_CLOSED;
    argv[0] = JS_NewInt32(ctx, EV_CLOSE);
    argv[1] = JS_NewInt32(ctx, code);
    argv[2] = JS_NewStringLen(ctx, reason ? reason : "", reason ? rlen : 0);
    argv[3] = JS_NewBool(ctx, clean);
    call_js(ctx, c->evfn, 4, (JSValueConst *)argv);
    JS_FreeValue(ctx, argv[2]);
}

static void conn_dispatch_error(conn *c, const char *msg)
{
    JSContext *ctx = c->jsctx;
    JSValue argv[2];
    argv[0] = JS_NewInt32(ctx, EV_ERROR);
    argv[1] = JS_NewString(ctx, msg ? msg : "");
    call_js(ctx, c->evfn, 2, (JSValueConst *)argv);
    JS_FreeValue(ctx, argv[1]);
}

static void conn_free_queue(conn *c)
{
    sbuf *b = c->qhead, *n;
    while (b) {
        n = b->next;
        sbuf_free(b);
        b = n;
    }
    c->qhead = c->qtail = NULL;
    c->qbytes = 0;
    c->qcount = 0;
}

/* the wsi is gone: drop everything that ties the conn to lws */
static void own_release(conn *c);

static void conn_detach(conn *c)
{
    JSValue self;
    own_release(c);
    conn_free_queue(c);
    free(c->rx);
    c->rx = NULL;
    c->rxlen = c->rxcap = 0;
    c->wsi = NULL;
    c->state = ST_CLOSED;
    G.nconns--;
    self = c->self;
    c->self = JS_UNDEFINED;
    /* may finalize the conn: must be last */
    JS_FreeValue(c->jsctx, self);
}

/* ------------------------------------------------------------------ */
/* event-loop glue                                                        */

static void poll_notify(int fd, int mask)
{
    handle_data *hd;
    JSValue argv[2];
    if (G.destroying || !G.jsctx)
        return;
    hd = JS_GetOpaque(G.handle, js_lws_handle_class_id);
    if (!hd || JS_IsUndefined(hd->pollfn))
        return;
    argv[0] = JS_NewInt32(G.jsctx, fd);
    argv[1] = JS_NewInt32(G.jsctx, mask);
    call_js(G.jsctx, hd->pollfn, 2, (JSValueConst *)argv);
}

static int lws_to_mask(int ev)
{
    return ((ev & POLLIN) ? 1 : 0) | ((ev & POLLOUT) ? 2 : 0);
}

static uint32_t lws_to_epoll(int ev)
{
    return ((ev & POLLIN) ? EPOLLIN : 0) | ((ev & POLLOUT) ? EPOLLOUT : 0);
}

static void epoll_set(int op, int fd, int events)
{
    struct epoll_event ee;
    memset(&ee, 0, sizeof(ee));
    ee.events = lws_to_epoll(events);
    ee.data.u64 = ((uint64_t)(uint32_t)events << 32) | (uint32_t)fd;
    if (epoll_ctl(G.epfd, op, fd, &ee) < 0 && op != EPOLL_CTL_DEL)
        lwsl_err("epoll_ctl(%d, fd %d): %s\n", op, fd, strerror(errno));
}

static int own_events(int fd, int events)
{
    if (fd >= 0 && fd < FDMAP_MAX && g_fdmap[fd] && g_fdmap[fd]->own_rx)
        events |= POLLIN;
    return events;
}

static void poll_add(struct lws_pollargs *pa)
{
    G.nfds++;
    if (OPT(OPT_BATCH)) {
        epoll_set(EPOLL_CTL_ADD, pa->fd, pa->events);
        if (G.nfds == 1)
            poll_notify(G.epfd, 1);
    } else {
        poll_notify(pa->fd, lws_to_mask(pa->events));
    }
}

static void poll_del(struct lws_pollargs *pa)
{
    if (G.nfds > 0)
        G.nfds--;
    if (OPT(OPT_BATCH)) {
        epoll_set(EPOLL_CTL_DEL, pa->fd, 0);
        if (G.nfds == 0)
            poll_notify(G.epfd, 0);
    } else {
        poll_notify(pa->fd, 0);
    }
}

static void poll_change(struct lws_pollargs *pa)
{
    if (OPT(OPT_BATCH)) {
        epoll_set(EPOLL_CTL_MOD, pa->fd, own_events(pa->fd, pa->events));
    } else if (lws_to_mask(own_events(pa->fd, pa->events)) !=
               lws_to_mask(own_events(pa->fd, pa->prev_events))) {
        poll_notify(pa->fd, lws_to_mask(own_events(pa->fd, pa->events)));
    }
}

/* ------------------------------------------------------------------ */
/* sending                                                                */

/* 0 ok, -1 connection broken */
static int write_sbuf(conn *c, sbuf *b)
{
    int n = lws_write(c->wsi, b->data + LWS_PRE, b->len,
                      b->text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY);
    return n < 0 ? -1 : 0;
}

static int conn_drain(conn *c)
{
    while (c->qhead) {
        sbuf *b;
        if (lws_partial_buffered(c->wsi))
            break;
        b = c->qhead;
        c->qhead = b->next;
        if (!c->qhead)
            c->qtail = NULL;
        c->qbytes -= b->len;
        c->qcount--;
        if (write_sbuf(c, b) < 0) {
            sbuf_free(b);
            return -1;
        }
        sbuf_free(b);
    }
    return 0;
}

static void conn_kill_async(conn *c)
{
    if (c->wsi)
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
}

/*
 * Queue or directly write one message.  `p` may be NULL when `b` already
 * holds the payload.
 */
static int conn_send(JSContext *ctx, conn *c, const uint8_t *p, size_t len, int text)
{
    if (!c->wsi || c->state != ST_OPEN || c->close_requested)
        return 0; /* browsers silently discard */

    if (c->own) {
        if (c->kill_pending || c->close_sent)
            return 0;
        if (own_append(c, text ? 1 : 2, p, len) < 0) {
            JS_ThrowOutOfMemory(ctx);
            return -1;
        }
        own_kick(c);
        return 0;
    }

    /* fast path: nothing queued and socket not backed up -> write now */
    if (!c->qhead && !lws_partial_buffered(c->wsi)) {
        int n;
        if (OPT(OPT_POOL) && len <= STACK_SEND_MAX) {
            uint8_t stackbuf[LWS_PRE + STACK_SEND_MAX + 1];
            if (len)
                memcpy(stackbuf + LWS_PRE, p, len);
            n = lws_write(c->wsi, stackbuf + LWS_PRE, len,
                          text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY);
        } else {
            sbuf *b = sbuf_alloc(len);
            if (!b) {
                JS_ThrowOutOfMemory(ctx);
                return -1;
            }
            if (len)
                memcpy(b->data + LWS_PRE, p, len);
            b->text = (uint8_t)text;
            n = write_sbuf(c, b);
            sbuf_free(b);
        }
        if (n < 0)
            conn_kill_async(c);
        else if (lws_partial_buffered(c->wsi))
            lws_callback_on_writable(c->wsi);
        return 0;
    }

    {
        sbuf *b = sbuf_alloc(len);
        if (!b) {
            JS_ThrowOutOfMemory(ctx);
            return -1;
        }
        if (len)
            memcpy(b->data + LWS_PRE, p, len);
        b->text = (uint8_t)text;
        if (c->qtail)
            c->qtail->next = b;
        else
            c->qhead = b;
        c->qtail = b;
        c->qbytes += len;
        c->qcount++;
        lws_callback_on_writable(c->wsi);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* receiving                                                              */

static int deliver_message(conn *c, JSValue v)
{
    JSContext *ctx = c->jsctx;
    if (JS_IsException(v)) {
        js_std_dump_error(ctx);
        return 0;
    }
    call_js(ctx, c->msgfn, 1, (JSValueConst *)&v);
    JS_FreeValue(ctx, v);
    return 0;
}

static void free_rx(JSRuntime *rt, void *opaque, void *ptr)
{
    UNUSED(rt);
    UNUSED(opaque);
    free(ptr);
}

static void own_fail(conn *c, int code, const char *reason, size_t rlen);

/*
 * One chunk of a data message.  `remain` is what the current frame still
 * owes after this chunk.  Returns -1 when the connection is to be failed
 * (c->fail_code set).
 */
static int conn_deliver(conn *c, const uint8_t *in, size_t len, int first, int final,
                        int binary, size_t remain)
{
    JSContext *ctx = c->jsctx;

    if (c->state != ST_OPEN && c->state != ST_CLOSING)
        return 0;

    if (!OPT(OPT_JOIN)) {
        /* naive path: hand every chunk to JS, which collects and joins */
        JSValue argv[5];
        argv[0] = JS_NewInt32(ctx, EV_CHUNK);
        argv[1] = JS_NewArrayBufferCopy(ctx, in, len);
        argv[2] = JS_NewBool(ctx, first);
        argv[3] = JS_NewBool(ctx, final);
        argv[4] = JS_NewBool(ctx, binary);
        call_js(ctx, c->evfn, 5, (JSValueConst *)argv);
        JS_FreeValue(ctx, argv[1]);
        goto check_fail;
    }

    if (first && final && !c->rxlen) {
        /* whole message in one chunk: one copy, straight from lws' buffer */
        if (binary) {
            deliver_message(c, JS_NewArrayBufferCopy(ctx, in, len));
        } else {
            if (!utf8_valid(in, len)) {
                c->fail_code = 1007;
                goto check_fail;
            }
            deliver_message(c, JS_NewStringLen(ctx, (const char *)in, len));
        }
        goto check_fail;
    }

    if (first)
        c->rxlen = 0;

    if (c->rxlen + len > c->rxcap) {
        size_t need = c->rxlen + len, ncap;
        uint8_t *nb;
        if (OPT(OPT_FRAGBUF)) {
            /* size from the frame header: what we have + what this frame still owes */
            ncap = need + remain;
            if (!first && ncap < c->rxcap * 2)
                ncap = c->rxcap * 2;
        } else {
            ncap = need; /* naive: grow to exactly what is needed, every chunk */
        }
        nb = realloc(c->rx, ncap ? ncap : 1);
        if (!nb) {
            c->fail_code = 1009;
            goto check_fail;
        }
        c->rx = nb;
        c->rxcap = ncap;
    }
    if (len)
        memcpy(c->rx + c->rxlen, in, len);
    c->rxlen += len;

    if (final) {
        size_t mlen = c->rxlen;
        c->rxlen = 0;
        if (binary) {
            /* hand the accumulator itself to the ArrayBuffer: no copy */
            uint8_t *buf = c->rx;
            if (mlen < c->rxcap && !OPT(OPT_FRAGBUF)) {
                /* exact-size anyway in the naive path */
            }
            c->rx = NULL;
            c->rxcap = 0;
            deliver_message(c, JS_NewArrayBuffer(ctx, buf, mlen, free_rx, NULL, 0));
        } else {
            if (!utf8_valid(c->rx, mlen)) {
                c->fail_code = 1007;
                goto check_fail;
            }
            deliver_message(c, JS_NewStringLen(ctx, (const char *)c->rx, mlen));
            if (!OPT(OPT_FRAGBUF) || c->rxcap > (1u << 20)) {
                free(c->rx);
                c->rx = NULL;
                c->rxcap = 0;
            }
        }
    }

check_fail:
    return c->fail_code ? -1 : 0;
}

static const char *fail_text(int code)
{
    switch (code) {
    case 1007: return "invalid UTF-8 in text message";
    case 1009: return "message too big";
    default: return "protocol error";
    }
}

/* lws path: an lws rx callback; returns -1 to make lws close the connection */
static int conn_receive(conn *c, struct lws *wsi, const uint8_t *in, size_t len)
{
    int first = lws_is_first_fragment(wsi);
    int final = lws_is_final_fragment(wsi);
    int binary = lws_frame_is_binary(wsi);
    size_t remain = (size_t)lws_remaining_packet_payload(wsi);

    if (first)
        c->msg_op = binary ? 2 : 1;
    if (final && !remain)
        c->msg_op = 0;
    if (conn_deliver(c, in, len, first, final, binary, remain) < 0) {
        const char *r = fail_text(c->fail_code);
        size_t rl = strlen(r);
        c->close_code = c->fail_code;
        memcpy(c->close_reason, r, rl);
        c->close_reason_len = rl;
        lws_close_reason(wsi, (enum lws_close_status)c->fail_code, (unsigned char *)c->close_reason,
                         c->close_reason_len);
        if (!c->closed_dispatched && c->wsi) {
            conn_dispatch_error(c, r);
            c->state = ST_CLOSING;
        }
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* opt "framing": RFC 6455 client framing on the raw socket              */

/*
 * For ws:// connections lws does the connect and the opening handshake;
 * once the connection is established we frame, mask and write ourselves
 * (queued frames are coalesced into one sendmsg per wakeup), and, as soon
 * as lws holds no buffered rx and is between frames, read and parse the
 * socket ourselves (lws' own parser handles one byte per call).  lws still
 * owns the wsi: writable notifications, timeouts and the final close.
 */

typedef struct oblk {
    struct oblk *next;
    size_t off, len, cap;
    uint8_t d[];
} oblk;

#define OBLK_CAP (64 * 1024)
#define OBLK_SPARES 8
#define RXBUF_SIZE (256 * 1024)
#define OWN_FLUSH_AT (256 * 1024)

static struct {
    oblk *spare;
    int nspare;
    uint8_t *rxbuf;
    uint8_t rnd[256];
    size_t rndpos;
} F = { .rndpos = 256 };

static oblk *oblk_new(size_t need)
{
    oblk *b;
    if (need <= OBLK_CAP && F.spare) {
        b = F.spare;
        F.spare = b->next;
        F.nspare--;
    } else {
        size_t cap = need <= OBLK_CAP ? OBLK_CAP : need;
        b = malloc(sizeof(oblk) + cap);
        if (!b)
            return NULL;
        b->cap = cap;
    }
    b->next = NULL;
    b->off = b->len = 0;
    return b;
}

static void oblk_free(oblk *b)
{
    if (b->cap == OBLK_CAP && F.nspare < OBLK_SPARES) {
        b->next = F.spare;
        F.spare = b;
        F.nspare++;
    } else {
        free(b);
    }
}

static void framing_destroy(void)
{
    while (F.spare) {
        oblk *n = F.spare->next;
        free(F.spare);
        F.spare = n;
    }
    F.nspare = 0;
    free(F.rxbuf);
    F.rxbuf = NULL;
}

static void own_free_queue(conn *c)
{
    oblk *b = c->ohead, *n;
    while (b) {
        n = b->next;
        oblk_free(b);
        b = n;
    }
    c->ohead = c->otail = NULL;
    c->obytes = 0;
}

/* 4 unpredictable bytes per frame, from a getrandom() refilled buffer */
static void mask_key(uint8_t key[4])
{
    if (F.rndpos + 4 > sizeof(F.rnd)) {
        size_t got = 0;
        while (got < sizeof(F.rnd)) {
            ssize_t n = getrandom(F.rnd + got, sizeof(F.rnd) - got, 0);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                abort(); /* no entropy: never send predictable masks */
            }
            got += (size_t)n;
        }
        F.rndpos = 0;
    }
    memcpy(key, F.rnd + F.rndpos, 4);
    F.rndpos += 4;
}

/* dst = src ^ key (repeating), 8 bytes at a time */
static void mask_copy(uint8_t *dst, const uint8_t *src, size_t len, const uint8_t key[4])
{
    uint64_t k8;
    uint32_t k4;
    size_t i = 0;
    memcpy(&k4, key, 4);
    k8 = ((uint64_t)k4 << 32) | k4;
    for (; i + 32 <= len; i += 32) {
        uint64_t a, b, cc, d;
        memcpy(&a, src + i, 8);
        memcpy(&b, src + i + 8, 8);
        memcpy(&cc, src + i + 16, 8);
        memcpy(&d, src + i + 24, 8);
        a ^= k8;
        b ^= k8;
        cc ^= k8;
        d ^= k8;
        memcpy(dst + i, &a, 8);
        memcpy(dst + i + 8, &b, 8);
        memcpy(dst + i + 16, &cc, 8);
        memcpy(dst + i + 24, &d, 8);
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t a;
        memcpy(&a, src + i, 8);
        a ^= k8;
        memcpy(dst + i, &a, 8);
    }
    for (; i < len; i++)
        dst[i] = src[i] ^ key[i & 3];
}

/* append one complete masked frame to the output queue; -1 out of memory */
static int own_append(conn *c, int opcode, const uint8_t *p, size_t len)
{
    uint8_t h[14], key[4];
    size_t hl = 2, need;
    oblk *b = c->otail;
    h[0] = (uint8_t)(0x80 | opcode);
    if (len < 126) {
        h[1] = (uint8_t)(0x80 | len);
    } else if (len <= 0xffff) {
        h[1] = 0x80 | 126;
        h[2] = (uint8_t)(len >> 8);
        h[3] = (uint8_t)len;
        hl = 4;
    } else {
        int i;
        h[1] = 0x80 | 127;
        for (i = 0; i < 8; i++)
            h[2 + i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
        hl = 10;
    }
    mask_key(key);
    memcpy(h + hl, key, 4);
    hl += 4;
    need = hl + len;
    if (!b || b->cap - b->len < need) {
        b = oblk_new(need);
        if (!b)
            return -1;
        if (c->otail)
            c->otail->next = b;
        else
            c->ohead = b;
        c->otail = b;
    }
    memcpy(b->d + b->len, h, hl);
    if (len)
        mask_copy(b->d + b->len + hl, p, len, key);
    b->len += need;
    c->obytes += need;
    return 0;
}

/* write as much of the queue as the socket takes: 0 ok, -1 broken */
static int own_flush(conn *c)
{
    while (c->ohead) {
        struct iovec iov[64];
        struct msghdr mh;
        oblk *b;
        int n = 0;
        ssize_t w;
        for (b = c->ohead; b && n < (int)countof(iov); b = b->next, n++) {
            iov[n].iov_base = b->d + b->off;
            iov[n].iov_len = b->len - b->off;
        }
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t)n;
        w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return -1;
        }
        G.own_writes++;
        c->obytes -= (size_t)w;
        while (w > 0) {
            b = c->ohead;
            if ((size_t)w >= b->len - b->off) {
                w -= (ssize_t)(b->len - b->off);
                c->ohead = b->next;
                if (!c->ohead)
                    c->otail = NULL;
                oblk_free(b);
            } else {
                b->off += (size_t)w;
                w = 0;
            }
        }
        if (c->ohead && c->ohead->off)
            return 0; /* socket full */
    }
    return 0;
}

static void own_mark_dirty(conn *c)
{
    if (c->dirty)
        return;
    c->dirty = 1;
    c->dnext = G.dirty;
    G.dirty = c;
}

static void own_unlink_dirty(conn *c)
{
    conn **pp;
    if (!c->dirty)
        return;
    for (pp = &G.dirty; *pp; pp = &(*pp)->dnext) {
        if (*pp == c) {
            *pp = c->dnext;
            break;
        }
    }
    c->dirty = 0;
    c->dnext = NULL;
}

/*
 * Output was queued (or a kill requested).  Inside a service call the
 * flush is deferred to its end, so a burst of sends becomes one sendmsg;
 * outside, it happens now.
 */
static void own_kick(conn *c)
{
    if (!c->wsi)
        return;
    if (G.in_service) {
        own_mark_dirty(c);
        /* small frames wait for the end of the service call (coalescing);
         * once a lot is queued, write now so the kernel drains a big burst
         * while it is being queued (bounds the queue, i.e. peak RSS) */
        if (c->obytes < OWN_FLUSH_AT)
            return;
        if (own_flush(c) < 0) {
            own_free_queue(c);
            c->kill_pending = 1;
        }
        return;
    }
    if (own_flush(c) < 0) {
        own_free_queue(c);
        c->kill_pending = 1;
    }
    if (c->ohead || c->kill_pending)
        lws_callback_on_writable(c->wsi); /* the kill happens in WRITEABLE */
}

/* end of a service call: flush what was queued, kill what is finished */
static void own_post_service(void)
{
    while (G.dirty) {
        conn *c = G.dirty;
        G.dirty = c->dnext;
        c->dirty = 0;
        c->dnext = NULL;
        if (!c->wsi)
            continue;
        if (own_flush(c) < 0) {
            own_free_queue(c);
            c->kill_pending = 1;
        }
        if (c->ohead) {
            lws_callback_on_writable(c->wsi);
        } else if (c->kill_pending) {
            /* outside any lws callback: close now; may free c */
            lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_SYNC);
        }
    }
}

/* send a close frame (once) */
static void own_send_close(conn *c, int code, const char *reason, size_t rlen)
{
    uint8_t b[125];
    size_t n = 0;
    if (c->close_sent)
        return;
    c->close_sent = 1;
    if (code != 1005 && code > 0) {
        b[0] = (uint8_t)(code >> 8);
        b[1] = (uint8_t)code;
        if (rlen > 123)
            rlen = 123;
        if (rlen)
            memcpy(b + 2, reason, rlen);
        n = 2 + rlen;
    }
    if (own_append(c, 8, b, n) < 0)
        c->kill_pending = 1;
}

/* fail the connection: close frame with code, then drop the TCP connection */
static void own_fail(conn *c, int code, const char *reason, size_t rlen)
{
    if (!c->fail_code)
        c->fail_code = code;
    c->close_code = code;
    if (rlen > sizeof(c->close_reason))
        rlen = sizeof(c->close_reason);
    memcpy(c->close_reason, reason, rlen);
    c->close_reason_len = rlen;
    if (!c->closed_dispatched && c->state != ST_CLOSED) {
        conn_dispatch_error(c, reason);
        c->state = ST_CLOSING;
    }
    own_send_close(c, code, reason, rlen);
    c->kill_pending = 1;
    own_kick(c);
}

static int close_code_ok(int code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

static void own_control(conn *c)
{
    switch (c->f_op) {
    case 9: /* ping -> pong */
        if (!c->close_sent && own_append(c, 10, c->ctl, c->ctllen) < 0)
            c->kill_pending = 1;
        own_kick(c);
        break;
    case 10: /* pong */
        break;
    case 8: { /* close */
        int code = 1005;
        size_t rl = 0;
        if (c->ctllen == 1) {
            own_fail(c, 1002, "bad close frame", 15);
            return;
        }
        if (c->ctllen >= 2) {
            code = (c->ctl[0] << 8) | c->ctl[1];
            rl = c->ctllen - 2;
            if (!close_code_ok(code)) {
                own_fail(c, 1002, "bad close code", 14);
                return;
            }
            if (!utf8_valid(c->ctl + 2, rl)) {
                own_fail(c, 1007, "invalid UTF-8 in close reason", 29);
                return;
            }
        }
        c->peer_closed = 1;
        c->peer_code = code;
        memcpy(c->peer_reason, c->ctl + 2, rl);
        c->peer_reason_len = rl;
        if (c->state == ST_OPEN)
            c->state = ST_CLOSING;
        /* echo the code (RFC 6455 5.5.1), then drop the connection */
        own_send_close(c, code, NULL, 0);
        c->kill_pending = 1;
        own_kick(c);
        break;
    }
    }
}

/* parse a run of bytes from the socket */
static void own_parse(conn *c, const uint8_t *p, size_t n)
{
    while (n && !c->kill_pending && !c->fail_code) {
        if (!c->in_payload) {
            size_t take;
            if (!c->hdrneed) {
                c->hdrneed = 2;
                c->hdrlen = 0;
            }
            take = (size_t)(c->hdrneed - c->hdrlen);
            if (take > n)
                take = n;
            memcpy(c->hdr + c->hdrlen, p, take);
            c->hdrlen += (int)take;
            p += take;
            n -= take;
            if (c->hdrlen < c->hdrneed)
                break;
            if (c->hdrneed == 2) {
                uint8_t l7 = c->hdr[1] & 0x7f;
                if (c->hdr[1] & 0x80) {
                    own_fail(c, 1002, "masked frame from server", 24);
                    return;
                }
                if (l7 == 126 || l7 == 127) {
                    c->hdrneed = l7 == 126 ? 4 : 10;
                    continue;
                }
            }
            /* header complete */
            {
                uint8_t b0 = c->hdr[0], l7 = c->hdr[1] & 0x7f;
                uint64_t len = l7;
                int op = b0 & 0x0f, i;
                if (l7 == 126) {
                    len = ((uint64_t)c->hdr[2] << 8) | c->hdr[3];
                } else if (l7 == 127) {
                    len = 0;
                    for (i = 0; i < 8; i++)
                        len = (len << 8) | c->hdr[2 + i];
                    if (len >> 63) {
                        own_fail(c, 1002, "bad frame length", 16);
                        return;
                    }
                }
                c->f_fin = !!(b0 & 0x80);
                c->f_op = op;
                c->f_left = len;
                c->hdrneed = 0;
                if (b0 & 0x70) {
                    own_fail(c, 1002, "reserved bits set", 17);
                    return;
                }
                if (op >= 8) {
                    if (op > 10 || !c->f_fin || len > 125) {
                        own_fail(c, 1002, "bad control frame", 17);
                        return;
                    }
                    c->ctllen = 0;
                } else if (op == 0) {
                    if (!c->msg_op) {
                        own_fail(c, 1002, "unexpected continuation", 23);
                        return;
                    }
                } else if (op == 1 || op == 2) {
                    if (c->msg_op) {
                        own_fail(c, 1002, "expected continuation", 21);
                        return;
                    }
                    c->msg_op = op;
                    c->msg_first = 1;
                } else {
                    own_fail(c, 1002, "unknown opcode", 14);
                    return;
                }
                c->in_payload = 1;
                if (len)
                    continue;
            }
        }
        /* payload (possibly empty) */
        {
            size_t take = c->f_left < n ? (size_t)c->f_left : n;
            if (c->f_op >= 8) {
                memcpy(c->ctl + c->ctllen, p, take);
                c->ctllen += take;
            } else {
                int first = c->msg_first;
                int final = c->f_fin && take == c->f_left;
                int binary = c->msg_op == 2;
                if (final)
                    c->msg_op = 0;
                c->msg_first = 0;
                if (c->f_left - take > SIZE_MAX / 2) {
                    own_fail(c, 1009, "message too big", 15);
                    return;
                }
                if (conn_deliver(c, p, take, first, final, binary, (size_t)(c->f_left - take)) < 0) {
                    const char *r = fail_text(c->fail_code);
                    int code = c->fail_code;
                    c->fail_code = 0;
                    own_fail(c, code, r, strlen(r));
                    return;
                }
            }
            p += take;
            n -= take;
            c->f_left -= take;
            if (!c->f_left) {
                c->in_payload = 0;
                if (c->f_op >= 8)
                    own_control(c);
            }
        }
    }
}

/* the socket is readable: read and parse everything there is (bounded) */
static void own_read(conn *c)
{
    int i;
    if (!F.rxbuf) {
        F.rxbuf = malloc(RXBUF_SIZE);
        if (!F.rxbuf)
            return;
    }
    for (i = 0; i < 16 && c->wsi && !c->kill_pending; i++) {
        ssize_t n = recv(c->fd, F.rxbuf, RXBUF_SIZE, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            n = 0;
        }
        if (n == 0) {
            /* peer gone (clean only if the close handshake was done) */
            own_free_queue(c);
            c->kill_pending = 1;
            own_mark_dirty(c);
            return;
        }
        G.own_reads++;
        if (c->peer_closed)
            continue; /* nothing after a close frame counts */
        own_parse(c, F.rxbuf, (size_t)n);
        if ((size_t)n < RXBUF_SIZE)
            return;
    }
}

/*
 * Service one socket: for "framing" connections rx (and hangups) are
 * handled here and only what is left goes to lws.
 */
static void own_release(conn *c)
{
    own_unlink_dirty(c);
    own_free_queue(c);
    if (c->own && c->fd >= 0 && c->fd < FDMAP_MAX && g_fdmap[c->fd] == c)
        g_fdmap[c->fd] = NULL;
    c->own = c->own_rx = 0;
}

/* lws timers are about to run lws' own poll(): read our sockets first */
static void own_read_all(void)
{
    int fd;
    for (fd = 0; fd < FDMAP_MAX; fd++) {
        conn *c = g_fdmap[fd];
        if (c && c->own_rx && c->wsi && !c->kill_pending)
            own_read(c);
    }
}

static void service_one(int fd, short events, short revents)
{
    struct lws_pollfd pfd;
    conn *c = (fd >= 0 && fd < FDMAP_MAX) ? g_fdmap[fd] : NULL;
    if (c && c->own && !c->own_rx && (revents & (POLLIN | POLLHUP | POLLERR))) {
        /* take over rx only when lws holds nothing and is between frames */
        if (lws_service_adjust_timeout(G.ctx, 1, 0) && !lws_remaining_packet_payload(c->wsi)) {
            /* lws must never read this socket again (its own poll() in
             * lws_service would): rx flow control drops its POLLIN, while
             * our registration keeps it (own_events) */
            c->own_rx = 1;
            lws_rx_flow_control(c->wsi, 0);
        }
    }
    if (c && c->own_rx) {
        if (revents & (POLLIN | POLLHUP | POLLERR))
            own_read(c);
        revents &= (short)~(POLLIN | POLLHUP | POLLERR);
        if (!revents)
            return;
    }
    pfd.fd = fd;
    pfd.events = events;
    pfd.revents = revents;
    lws_service_fd(G.ctx, &pfd);
}

/* ------------------------------------------------------------------ */
/* the lws protocol callback                                              */

static int callback_ws(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                       void *in, size_t len)
{
    conn *c = (conn *)user;

    switch (reason) {
    case LWS_CALLBACK_ADD_POLL_FD:
        poll_add((struct lws_pollargs *)in);
        return 0;
    case LWS_CALLBACK_DEL_POLL_FD:
        poll_del((struct lws_pollargs *)in);
        return 0;
    case LWS_CALLBACK_CHANGE_MODE_POLL_FD:
        poll_change((struct lws_pollargs *)in);
        return 0;
    case LWS_CALLBACK_LOCK_POLL:
    case LWS_CALLBACK_UNLOCK_POLL:
        return 0;
    default:
        break;
    }

    if (!c || G.destroying)
        return 0;

    switch (reason) {
    case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
        /* headers are still attached here: remember the chosen subprotocol */
        if (lws_hdr_copy(wsi, c->protocol, sizeof(c->protocol), WSI_TOKEN_PROTOCOL) < 0)
            c->protocol[0] = 0;
        return 0;

    case LWS_CALLBACK_CLIENT_ESTABLISHED: {
        JSValue argv[2];
        c->state = ST_OPEN;
        if (OPT(OPT_FRAMING) && !c->secure) {
            int fd = (int)lws_get_socket_fd(wsi);
            if (fd >= 0 && fd < FDMAP_MAX && !g_fdmap[fd] && !lws_partial_buffered(wsi)) {
                c->fd = fd;
                c->own = 1;
                g_fdmap[fd] = c;
            }
        }
        argv[0] = JS_NewInt32(c->jsctx, EV_OPEN);
        argv[1] = JS_NewString(c->jsctx, c->protocol);
        call_js(c->jsctx, c->evfn, 2, (JSValueConst *)argv);
        JS_FreeValue(c->jsctx, argv[1]);
        if (c->qhead || c->close_requested)
            lws_callback_on_writable(wsi);
        return 0;
    }

    case LWS_CALLBACK_CLIENT_RECEIVE:
        return conn_receive(c, wsi, (const uint8_t *)in, len);

    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (c->own) {
            if (own_flush(c) < 0)
                return -1;
            if (c->ohead) {
                lws_callback_on_writable(wsi);
                return 0;
            }
            return c->kill_pending ? -1 : 0;
        }
        if (c->fail_code)
            return -1;
        if (conn_drain(c) < 0)
            return -1;
        if (c->qhead) {
            lws_callback_on_writable(wsi);
            return 0;
        }
        if (c->close_requested && !lws_partial_buffered(wsi)) {
            lws_close_reason(wsi, (enum lws_close_status)c->close_code,
                             (unsigned char *)c->close_reason, c->close_reason_len);
            return -1;
        }
        return 0;

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: {
        const uint8_t *p = in;
        c->peer_closed = 1;
        if (len >= 2) {
            size_t rl = len - 2;
            c->peer_code = (p[0] << 8) | p[1];
            if (rl > sizeof(c->peer_reason))
                rl = sizeof(c->peer_reason);
            memcpy(c->peer_reason, p + 2, rl);
            c->peer_reason_len = rl;
        } else {
            c->peer_code = 1005;
            c->peer_reason_len = 0;
        }
        if (c->state == ST_OPEN)
            c->state = ST_CLOSING;
        return 0;
    }

    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        if (!c->closed_dispatched) {
            conn_dispatch_error(c, in ? (const char *)in : "connection error");
            conn_dispatch_close(c, 1006, "", 0, 0);
        }
        return 0;

    case LWS_CALLBACK_CLIENT_CLOSED:
        if (!c->closed_dispatched) {
            if (c->fail_code)
                conn_dispatch_close(c, c->fail_code, c->close_reason, c->close_reason_len, 0);
            else if (c->peer_closed)
                conn_dispatch_close(c, c->peer_code, c->peer_reason, c->peer_reason_len, 1);
            else if (c->close_requested && !c->aborted)
                conn_dispatch_close(c, c->close_code, c->close_reason, c->close_reason_len, 1);
            else {
                if (!c->aborted)
                    conn_dispatch_error(c, "connection lost");
                conn_dispatch_close(c, 1006, "", 0, 0);
            }
        }
        return 0;

    case LWS_CALLBACK_WSI_DESTROY:
        UNUSED(wsi);
        if (!JS_IsUndefined(c->self)) {
            if (!c->closed_dispatched) {
                if (c->state == ST_CONNECTING || c->aborted)
                    conn_dispatch_error(c, "connection failed");
                conn_dispatch_close(c, 1006, "", 0, 0);
            }
            conn_detach(c); /* may free c */
        }
        return 0;

    default:
        break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    {
        .name = "qjsws",
        .callback = callback_ws,
        .per_session_data_size = 0,
        .rx_buffer_size = 65536,
        .tx_packet_size = 64u << 20,
    },
    LWS_PROTOCOL_LIST_TERM
};

/* ------------------------------------------------------------------ */
/* JS: handle class                                                       */

static void handle_finalizer(JSRuntime *rt, JSValue val)
{
    handle_data *hd = JS_GetOpaque(val, js_lws_handle_class_id);
    if (!hd)
        return;
    G.destroying = 1;
    if (G.ctx) {
        lws_context_destroy(G.ctx);
        G.ctx = NULL;
    }
    if (G.epfd >= 0) {
        close(G.epfd);
        G.epfd = -1;
    }
    pool_destroy();
    framing_destroy();
    JS_FreeValueRT(rt, hd->pollfn);
    js_free_rt(rt, hd);
    G.jsctx = NULL;
    G.handle = JS_UNDEFINED;
}

static void handle_mark(JSRuntime *rt, JSValueConst val, JS_MarkFunc *mark_func)
{
    handle_data *hd = JS_GetOpaque(val, js_lws_handle_class_id);
    if (hd)
        JS_MarkValue(rt, hd->pollfn, mark_func);
}

static JSClassDef handle_class = {
    "LwsHandle",
    .finalizer = handle_finalizer,
    .gc_mark = handle_mark,
};

/* init(pollfn) -> handle */
static JSValue js_init(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct lws_context_creation_info info;
    handle_data *hd;
    JSValue obj;
    const char *lv;
    UNUSED(this_val);
    UNUSED(argc);

    if (G.ctx)
        return JS_ThrowInternalError(ctx, "quickjs-websocket: already initialised");
    if (!JS_IsFunction(ctx, argv[0]))
        return JS_ThrowTypeError(ctx, "pollfn must be a function");

    lv = getenv("QJSWS_LWS_LOG");
    lws_set_log_level(lv ? atoi(lv) : (LLL_ERR), NULL);

    G.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (G.epfd < 0)
        return JS_ThrowInternalError(ctx, "epoll_create1: %s", strerror(errno));

    pool_init();

    memset(&info, 0, sizeof(info));
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.gid = (gid_t)-1;
    info.uid = (uid_t)-1;
    info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    info.pt_serv_buf_size = 65536;
    info.fd_limit_per_thread = 1024;

    obj = JS_NewObjectClass(ctx, (int)js_lws_handle_class_id);
    if (JS_IsException(obj))
        return obj;
    hd = js_mallocz(ctx, sizeof(*hd));
    if (!hd) {
        JS_FreeValue(ctx, obj);
        return JS_EXCEPTION;
    }
    hd->pollfn = JS_DupValue(ctx, argv[0]);
    JS_SetOpaque(obj, hd);
    G.jsctx = ctx;
    G.handle = obj;
    G.destroying = 0;

    G.ctx = lws_create_context(&info);
    if (!G.ctx) {
        JS_FreeValue(ctx, obj);
        return JS_ThrowInternalError(ctx, "lws_create_context failed");
    }
    return obj;
}

/* after any servicing: force service of rx lws has buffered; returns 1 if
 * lws still wants to be serviced again immediately */
static int service_pending(void)
{
    int i;
    for (i = 0; i < 4; i++) {
        if (lws_service_adjust_timeout(G.ctx, 1, 0))
            return 0;
        lws_service_tsi(G.ctx, -1, 0);
    }
    return !lws_service_adjust_timeout(G.ctx, 1, 0);
}

/* service(): batch mode wakeup; services every ready lws socket */
static JSValue js_service(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct epoll_event evs[64];
    int n, i;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!G.ctx)
        return JS_FALSE;
    G.services++;
    G.in_service++;
    n = epoll_wait(G.epfd, evs, (int)countof(evs), 0);
    for (i = 0; i < n; i++) {
        uint32_t e = evs[i].events;
        int fd = (int)(uint32_t)(evs[i].data.u64 & 0xffffffffu);
        short events = (short)(evs[i].data.u64 >> 32);
        short revents = (short)(((e & EPOLLIN) ? POLLIN : 0) | ((e & EPOLLOUT) ? POLLOUT : 0) |
                                ((e & EPOLLHUP) ? POLLHUP : 0) | ((e & EPOLLERR) ? POLLERR : 0));
        G.service_fds++;
        service_one(fd, events, revents);
    }
    n = service_pending();
    G.in_service--;
    own_post_service();
    return JS_NewBool(ctx, n);
}

/* service_fd(fd, revents_mask): non-batch mode, one socket per wakeup */
static JSValue js_service_fd(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct lws_pollfd pfd;
    int fd, mask;
    UNUSED(this_val);
    UNUSED(argc);
    if (!G.ctx)
        return JS_FALSE;
    if (JS_ToInt32(ctx, &fd, argv[0]) || JS_ToInt32(ctx, &mask, argv[1]))
        return JS_EXCEPTION;
    G.services++;
    G.service_fds++;
    G.in_service++;
    pfd.events = (short)(((mask & 1) ? POLLIN : 0) | ((mask & 2) ? POLLOUT : 0));
    service_one(fd, pfd.events, pfd.events);
    mask = service_pending();
    G.in_service--;
    own_post_service();
    return JS_NewBool(ctx, mask);
}

/* tick(): lws timers + anything pending; returns 1 if more pending */
static JSValue js_tick(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int r;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!G.ctx)
        return JS_FALSE;
    G.ticks++;
    G.in_service++;
    own_read_all();
    lws_service(G.ctx, -1);
    r = service_pending();
    G.in_service--;
    own_post_service();
    return JS_NewBool(ctx, r);
}

/* active(): number of live connections */
static JSValue js_active(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    return JS_NewInt32(ctx, G.nconns);
}

/* ------------------------------------------------------------------ */
/* JS: conn class                                                         */

static void conn_finalizer(JSRuntime *rt, JSValue val)
{
    conn *c = JS_GetOpaque(val, js_lws_conn_class_id);
    if (!c)
        return;
    if (c->wsi) {
        /* only reachable at runtime teardown: disown the wsi */
        lws_set_wsi_user(c->wsi, NULL);
        c->wsi = NULL;
        G.nconns--;
    }
    own_release(c);
    conn_free_queue(c);
    free(c->rx);
    JS_FreeValueRT(rt, c->evfn);
    JS_FreeValueRT(rt, c->msgfn);
    js_free_rt(rt, c);
}

static void conn_mark(JSRuntime *rt, JSValueConst val, JS_MarkFunc *mark_func)
{
    conn *c = JS_GetOpaque(val, js_lws_conn_class_id);
    if (!c)
        return;
    JS_MarkValue(rt, c->evfn, mark_func);
    JS_MarkValue(rt, c->msgfn, mark_func);
}

static JSClassDef conn_class = {
    "LwsConn",
    .finalizer = conn_finalizer,
    .gc_mark = conn_mark,
};

static conn *get_conn(JSContext *ctx, JSValueConst v)
{
    return JS_GetOpaque2(ctx, v, js_lws_conn_class_id);
}

/* connect(secure, host, port, path, protocols, evfn, msgfn) -> conn */
static JSValue js_connect(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct lws_client_connect_info ci;
    const char *host = NULL, *path = NULL, *protos = NULL;
    char hosthdr[300];
    int secure, port;
    conn *c;
    JSValue obj;
    UNUSED(this_val);
    UNUSED(argc);

    if (!G.ctx)
        return JS_ThrowInternalError(ctx, "quickjs-websocket: not initialised");
    secure = JS_ToBool(ctx, argv[0]);
    if (JS_ToInt32(ctx, &port, argv[2]))
        return JS_EXCEPTION;
    host = JS_ToCString(ctx, argv[1]);
    path = JS_ToCString(ctx, argv[3]);
    if (!JS_IsUndefined(argv[4]) && !JS_IsNull(argv[4]))
        protos = JS_ToCString(ctx, argv[4]);
    if (!host || !path) {
        obj = JS_EXCEPTION;
        goto done;
    }

    obj = JS_NewObjectClass(ctx, (int)js_lws_conn_class_id);
    if (JS_IsException(obj))
        goto done;
    c = js_mallocz(ctx, sizeof(*c));
    if (!c) {
        JS_FreeValue(ctx, obj);
        obj = JS_EXCEPTION;
        goto done;
    }
    c->jsctx = ctx;
    c->evfn = JS_DupValue(ctx, argv[5]);
    c->msgfn = JS_DupValue(ctx, argv[6]);
    c->self = JS_DupValue(ctx, obj);
    c->state = ST_CONNECTING;
    c->close_code = 1005;
    c->secure = secure;
    c->fd = -1;
    JS_SetOpaque(obj, c);
    G.nconns++;

    if (strchr(host, ':'))
        snprintf(hosthdr, sizeof(hosthdr), "[%s]", host);
    else
        snprintf(hosthdr, sizeof(hosthdr), "%s", host);
    if (port != (secure ? 443 : 80)) {
        size_t l = strlen(hosthdr);
        snprintf(hosthdr + l, sizeof(hosthdr) - l, ":%d", port);
    }

    memset(&ci, 0, sizeof(ci));
    ci.context = G.ctx;
    ci.address = host;
    ci.port = port;
    ci.path = path;
    ci.host = hosthdr;
    ci.origin = hosthdr;
    ci.protocol = protos && *protos ? protos : NULL;
    ci.local_protocol_name = "qjsws";
    ci.ssl_connection = secure ? LCCSCF_USE_SSL : 0;
    if (secure && getenv("QJSWS_INSECURE_TLS"))
        ci.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK;
    ci.userdata = c;
    ci.pwsi = &c->wsi;

    if (!lws_client_connect_via_info(&ci)) {
        /* failed synchronously; lws may or may not have reported it */
        if (!c->closed_dispatched) {
            conn_dispatch_error(c, "connect failed");
            conn_dispatch_close(c, 1006, "", 0, 0);
        }
        if (!JS_IsUndefined(c->self)) {
            c->wsi = NULL;
            conn_detach(c);
        }
    }

done:
    JS_FreeCString(ctx, host);
    JS_FreeCString(ctx, path);
    JS_FreeCString(ctx, protos);
    return obj;
}

/* conn.send(data, isText): data is a string, ArrayBuffer or a view */
static JSValue js_conn_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    int text;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    text = JS_ToBool(ctx, argv[1]);

    if (JS_IsString(argv[0])) {
        size_t len;
        const char *s = JS_ToCStringLen(ctx, &len, argv[0]);
        int r;
        if (!s)
            return JS_EXCEPTION;
        r = conn_send(ctx, c, (const uint8_t *)s, len, 1);
        JS_FreeCString(ctx, s);
        return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
    } else {
        size_t size;
        int64_t off = 0, blen = -1;
        uint8_t *p = JS_GetArrayBuffer(ctx, &size, argv[0]);
        if (!p)
            return JS_EXCEPTION;
        if (argc > 3 && !JS_IsUndefined(argv[2])) {
            if (JS_ToInt64(ctx, &off, argv[2]) || JS_ToInt64(ctx, &blen, argv[3]))
                return JS_EXCEPTION;
            if (off < 0 || blen < 0 || (uint64_t)off + (uint64_t)blen > size)
                return JS_ThrowRangeError(ctx, "send: view out of range");
        } else {
            blen = (int64_t)size;
        }
        if (conn_send(ctx, c, p + off, (size_t)blen, text) < 0)
            return JS_EXCEPTION;
        return JS_UNDEFINED;
    }
}

/* conn.close(code, reason) -- validated by the caller */
static JSValue js_conn_close(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    int code = 1000;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    if (!JS_IsUndefined(argv[0]) && JS_ToInt32(ctx, &code, argv[0]))
        return JS_EXCEPTION;
    if (!c->wsi || c->close_requested || c->closed_dispatched)
        return JS_UNDEFINED;
    c->close_requested = 1;
    c->close_code = JS_IsUndefined(argv[0]) ? 1000 : code;
    c->close_reason_len = 0;
    if (JS_IsString(argv[1])) {
        size_t len;
        const char *s = JS_ToCStringLen(ctx, &len, argv[1]);
        if (!s)
            return JS_EXCEPTION;
        if (len > 123)
            len = 123;
        memcpy(c->close_reason, s, len);
        c->close_reason_len = len;
        JS_FreeCString(ctx, s);
    }
    if (c->state == ST_CONNECTING) {
        c->aborted = 1;
        conn_kill_async(c);
    } else if (c->own) {
        c->state = ST_CLOSING;
        own_send_close(c, c->close_code, c->close_reason, c->close_reason_len);
        if (!c->kill_pending)
            lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_ACK, 5);
        own_kick(c);
    } else {
        c->state = ST_CLOSING;
        lws_callback_on_writable(c->wsi);
    }
    return JS_UNDEFINED;
}

/* conn.fail(code): from JS (naive receive path) -- close with this code */
static JSValue js_conn_fail(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    int code;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    if (JS_ToInt32(ctx, &code, argv[0]))
        return JS_EXCEPTION;
    if (c->wsi && c->own) {
        const char *r = fail_text(code);
        own_fail(c, code, r, strlen(r));
    } else if (c->wsi && !c->fail_code) {
        c->fail_code = code;
        lws_callback_on_writable(c->wsi);
    }
    return JS_UNDEFINED;
}

/* conn.buffered(): bytes queued in C and not yet handed to the socket */
static JSValue js_conn_buffered(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!c)
        return JS_EXCEPTION;
    if (c->own)
        return JS_NewInt64(ctx, (int64_t)c->obytes); /* framed bytes, O(1) */
    if (OPT(OPT_BUFFERED))
        return JS_NewInt64(ctx, (int64_t)c->qbytes);
    {
        /* naive: walk the queue every time */
        size_t total = 0;
        sbuf *b;
        for (b = c->qhead; b; b = b->next)
            total += b->len;
        return JS_NewInt64(ctx, (int64_t)total);
    }
}

static const JSCFunctionListEntry js_conn_proto_funcs[] = {
    JS_CFUNC_DEF("send", 4, js_conn_send),
    JS_CFUNC_DEF("close", 2, js_conn_close),
    JS_CFUNC_DEF("fail", 1, js_conn_fail),
    JS_CFUNC_DEF("buffered", 0, js_conn_buffered),
};

/* ------------------------------------------------------------------ */
/* JS: helpers                                                            */

/* parse_url(url) -> {secure, host, port, path}; throws SyntaxError */
static JSValue js_parse_url(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, argv[0]);
    const char *p, *end, *hs, *he, *ps;
    char hostbuf[256], pathbuf[2048];
    int secure, port = -1;
    JSValue obj;
    UNUSED(this_val);
    UNUSED(argc);
    if (!s)
        return JS_EXCEPTION;
    end = s + len;
    /* trim ASCII whitespace like the URL parser does */
    p = s;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        end--;
    if ((size_t)(end - p) >= 5 && !strncasecmp(p, "ws://", 5)) {
        secure = 0;
        p += 5;
    } else if ((size_t)(end - p) >= 6 && !strncasecmp(p, "wss://", 6)) {
        secure = 1;
        p += 6;
    } else if ((size_t)(end - p) >= 7 && !strncasecmp(p, "http://", 7)) {
        secure = 0;
        p += 7;
    } else if ((size_t)(end - p) >= 8 && !strncasecmp(p, "https://", 8)) {
        secure = 1;
        p += 8;
    } else {
        goto bad;
    }
    if (memchr(p, '#', (size_t)(end - p)))
        goto bad;
    /* authority ends at / or ? */
    {
        const char *a = p;
        while (a < end && *a != '/' && *a != '?')
            a++;
        ps = a;
    }
    if (memchr(p, '@', (size_t)(ps - p)))
        goto bad; /* userinfo not supported */
    if (p < ps && *p == '[') {
        hs = p + 1;
        he = memchr(hs, ']', (size_t)(ps - hs));
        if (!he || he == hs)
            goto bad;
        p = he + 1;
    } else {
        hs = p;
        he = p;
        while (he < ps && *he != ':')
            he++;
        p = he;
    }
    if (he == hs)
        goto bad;
    if (p < ps) {
        long v = 0;
        if (*p != ':')
            goto bad;
        p++;
        if (p == ps) {
            port = -1;
        } else {
            while (p < ps) {
                if (*p < '0' || *p > '9')
                    goto bad;
                v = v * 10 + (*p - '0');
                if (v > 65535)
                    goto bad;
                p++;
            }
            port = (int)v;
        }
    }
    if (port < 0)
        port = secure ? 443 : 80;
    if ((size_t)(he - hs) >= sizeof(hostbuf))
        goto bad;
    memcpy(hostbuf, hs, (size_t)(he - hs));
    hostbuf[he - hs] = 0;
    {
        size_t i;
        for (i = 0; hostbuf[i]; i++) {
            unsigned char ch = (unsigned char)hostbuf[i];
            if (ch <= ' ' || ch == '%' || ch == '<' || ch == '>' || ch == '\\' || ch == '^' ||
                ch == '|')
                goto bad;
            if (ch >= 'A' && ch <= 'Z')
                hostbuf[i] = (char)(ch + 32);
        }
    }
    if (ps == end) {
        strcpy(pathbuf, "/");
    } else {
        size_t pl = (size_t)(end - ps);
        if (pl + 2 >= sizeof(pathbuf))
            goto bad;
        if (*ps == '?') {
            pathbuf[0] = '/';
            memcpy(pathbuf + 1, ps, pl);
            pathbuf[pl + 1] = 0;
        } else {
            memcpy(pathbuf, ps, pl);
            pathbuf[pl] = 0;
        }
        {
            size_t i;
            for (i = 0; pathbuf[i]; i++)
                if ((unsigned char)pathbuf[i] <= ' ')
                    goto bad;
        }
    }
    JS_FreeCString(ctx, s);
    obj = JS_NewObject(ctx);
    if (JS_IsException(obj))
        return obj;
    JS_SetPropertyStr(ctx, obj, "secure", JS_NewBool(ctx, secure));
    JS_SetPropertyStr(ctx, obj, "host", JS_NewString(ctx, hostbuf));
    JS_SetPropertyStr(ctx, obj, "port", JS_NewInt32(ctx, port));
    JS_SetPropertyStr(ctx, obj, "path", JS_NewString(ctx, pathbuf));
    return obj;
bad:
    JS_FreeCString(ctx, s);
    return JS_ThrowSyntaxError(ctx, "Invalid WebSocket URL");
}

/* encode_utf8(str) -> ArrayBuffer (used by the naive string send path) */
static JSValue js_encode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, argv[0]);
    JSValue r;
    UNUSED(this_val);
    UNUSED(argc);
    if (!s)
        return JS_EXCEPTION;
    r = JS_NewArrayBufferCopy(ctx, (const uint8_t *)s, len);
    JS_FreeCString(ctx, s);
    return r;
}

/* decode_utf8(ArrayBuffer) -> string, or null when not valid UTF-8 */
static JSValue js_decode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t size;
    uint8_t *p = JS_GetArrayBuffer(ctx, &size, argv[0]);
    UNUSED(this_val);
    UNUSED(argc);
    if (!p)
        return JS_EXCEPTION;
    if (!utf8_valid(p, size))
        return JS_NULL;
    return JS_NewStringLen(ctx, (const char *)p, size);
}

/* pool_stats() -> {blocks, free, hits, misses} */
static JSValue js_pool_stats(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue o = JS_NewObject(ctx);
    int c, nfree = 0;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    for (c = 0; c < POOL_CLASSES; c++)
        nfree += g_pool.nfree[c];
    JS_SetPropertyStr(ctx, o, "blocks", JS_NewInt32(ctx, g_pool.total));
    JS_SetPropertyStr(ctx, o, "free", JS_NewInt32(ctx, nfree));
    JS_SetPropertyStr(ctx, o, "hits", JS_NewInt64(ctx, (int64_t)g_pool.hits));
    JS_SetPropertyStr(ctx, o, "misses", JS_NewInt64(ctx, (int64_t)g_pool.misses));
    JS_SetPropertyStr(ctx, o, "services", JS_NewInt64(ctx, (int64_t)G.services));
    JS_SetPropertyStr(ctx, o, "service_fds", JS_NewInt64(ctx, (int64_t)G.service_fds));
    JS_SetPropertyStr(ctx, o, "ticks", JS_NewInt64(ctx, (int64_t)G.ticks));
    JS_SetPropertyStr(ctx, o, "own_writes", JS_NewInt64(ctx, (int64_t)G.own_writes));
    JS_SetPropertyStr(ctx, o, "own_reads", JS_NewInt64(ctx, (int64_t)G.own_reads));
    JS_SetPropertyStr(ctx, o, "connections", JS_NewInt32(ctx, G.nconns));
    return o;
}

/* options() -> {join: true, ...} (true = optimization enabled) */
static JSValue js_options(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue o = JS_NewObject(ctx);
    size_t i;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    for (i = 0; i < countof(opt_names); i++)
        JS_SetPropertyStr(ctx, o, opt_names[i], JS_NewBool(ctx, (g_opts >> i) & 1));
    return o;
}

static const JSCFunctionListEntry js_lws_funcs[] = {
    JS_CFUNC_DEF("init", 1, js_init),
    JS_CFUNC_DEF("service", 0, js_service),
    JS_CFUNC_DEF("service_fd", 2, js_service_fd),
    JS_CFUNC_DEF("tick", 0, js_tick),
    JS_CFUNC_DEF("active", 0, js_active),
    JS_CFUNC_DEF("connect", 7, js_connect),
    JS_CFUNC_DEF("parse_url", 1, js_parse_url),
    JS_CFUNC_DEF("encode_utf8", 1, js_encode_utf8),
    JS_CFUNC_DEF("decode_utf8", 1, js_decode_utf8),
    JS_CFUNC_DEF("pool_stats", 0, js_pool_stats),
    JS_CFUNC_DEF("options", 0, js_options),
};

static int js_lws_module_init(JSContext *ctx, JSModuleDef *m)
{
    JSRuntime *rt = JS_GetRuntime(ctx);
    JSValue proto;

    g_opts = parse_disable(getenv("QJSWS_DISABLE"));

    JS_NewClassID(&js_lws_handle_class_id);
    JS_NewClass(rt, js_lws_handle_class_id, &handle_class);
    JS_NewClassID(&js_lws_conn_class_id);
    JS_NewClass(rt, js_lws_conn_class_id, &conn_class);
    proto = JS_NewObject(ctx);
    JS_SetPropertyFunctionList(ctx, proto, js_conn_proto_funcs, countof(js_conn_proto_funcs));
    JS_SetClassProto(ctx, js_lws_conn_class_id, proto);

    return JS_SetModuleExportList(ctx, m, js_lws_funcs, countof(js_lws_funcs));
}

JSModuleDef *js_init_module(JSContext *ctx, const char *module_name);

JSModuleDef *js_init_module(JSContext *ctx, const char *module_name)
{
    JSModuleDef *m = JS_NewCModule(ctx, module_name, js_lws_module_init);
    if (!m)
        return NULL;
    JS_AddModuleExportList(ctx, m, js_lws_funcs, countof(js_lws_funcs));
    return m;
}
