/*
 * quickjs-websocket: native half of a browser-style WebSocket client for the
 * stock QuickJS `qjs` interpreter, built on libwebsockets (external poll).
 *
 * One process-wide libwebsockets context is owned by a JS "handle" object
 * (created by init()).  Each connection is a JS "conn" object wrapping a
 * struct conn.  websocket.js provides the browser API on top of this.
 *
 * The ten optimizations can be switched off at run time with the environment
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
    OPT_ALL = (1 << 10) - 1,
};

static const char *const opt_names[] = {
    "join", "buffered", "pool", "scheduler", "transfer",
    "fragbuf", "strsend", "batch", "eventpool", "urlparse",
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
} G = { .epfd = -1 };

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
};

enum { EV_OPEN = 1, EV_CHUNK = 2, EV_ERROR = 3, EV_CLOSE = 4 };

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
static void conn_detach(conn *c)
{
    JSValue self;
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
        epoll_set(EPOLL_CTL_MOD, pa->fd, pa->events);
    } else if (lws_to_mask(pa->events) != lws_to_mask(pa->prev_events)) {
        poll_notify(pa->fd, lws_to_mask(pa->events));
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

/* returns -1 to make lws close the connection */
static int conn_receive(conn *c, struct lws *wsi, const uint8_t *in, size_t len)
{
    JSContext *ctx = c->jsctx;
    int first = lws_is_first_fragment(wsi);
    int final = lws_is_final_fragment(wsi);
    int binary = lws_frame_is_binary(wsi);

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
            size_t remain = (size_t)lws_remaining_packet_payload(wsi);
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
    if (c->fail_code) {
        static const char bad[] = "invalid UTF-8 in text message";
        static const char big[] = "message too big";
        const char *r = c->fail_code == 1007 ? bad : big;
        size_t rl = c->fail_code == 1007 ? sizeof(bad) - 1 : sizeof(big) - 1;
        c->close_code = c->fail_code;
        memcpy(c->close_reason, r, rl);
        c->close_reason_len = rl;
        lws_close_reason(wsi, (enum lws_close_status)c->fail_code, (unsigned char *)c->close_reason,
                         c->close_reason_len);
        if (!c->closed_dispatched && c->wsi) {
            conn_dispatch_error(c, c->fail_code == 1007 ? bad : big);
            c->state = ST_CLOSING;
        }
        return -1;
    }
    return 0;
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
    n = epoll_wait(G.epfd, evs, (int)countof(evs), 0);
    for (i = 0; i < n; i++) {
        struct lws_pollfd pfd;
        uint32_t e = evs[i].events;
        pfd.fd = (int)(uint32_t)(evs[i].data.u64 & 0xffffffffu);
        pfd.events = (short)(evs[i].data.u64 >> 32);
        pfd.revents = (short)(((e & EPOLLIN) ? POLLIN : 0) | ((e & EPOLLOUT) ? POLLOUT : 0) |
                              ((e & EPOLLHUP) ? POLLHUP : 0) | ((e & EPOLLERR) ? POLLERR : 0));
        G.service_fds++;
        lws_service_fd(G.ctx, &pfd);
    }
    return JS_NewBool(ctx, service_pending());
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
    pfd.fd = fd;
    pfd.events = (short)(((mask & 1) ? POLLIN : 0) | ((mask & 2) ? POLLOUT : 0));
    pfd.revents = pfd.events;
    lws_service_fd(G.ctx, &pfd);
    return JS_NewBool(ctx, service_pending());
}

/* tick(): lws timers + anything pending; returns 1 if more pending */
static JSValue js_tick(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!G.ctx)
        return JS_FALSE;
    G.ticks++;
    lws_service(G.ctx, -1);
    return JS_NewBool(ctx, service_pending());
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
    if (c->wsi && !c->fail_code) {
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
