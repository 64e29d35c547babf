/*
 * The JS "handle" object made by init() (it owns the event loop, and the lws
 * and TLS contexts once they are made) and the service entry points the qjs event loop calls.  The
 * one place that knows every layer: service_init() fills the upward interfaces,
 * one per layer boundary (loop_up, tp_up, fr_up, sm_up), through which the
 * lower layers report upward.
 *
 * The route of received bytes, our framing (ws://, and wss:// on our TLS):
 *   fd ready (epoll, service()/service_fd())  -> loop.c: the fd's handler
 *   -> the transport (tp_tcp.c / tp_tls.c)     -> tp_up.io = own_io (upgrade.c)
 *   -> the framer's read loop (frame.c)        -> the transport's read (tp_tcp.c:
 *      recv(); tp_tls.c: SSL_read, its socket BIO's recv() in tls_bio.c)
 *   -> fr_up.rx = conn_rx (rx.c)
 *   -> the parser (wsp_feed, wsproto.h, inlined with rx.c's table) -> rx.c's callbacks
 *   -> the state machine (sm.c: close frames, failures) and the message (rx.c)
 *   -> JS (jsev.c: onmessage and listeners; sm_up for open, error, close).
 * The lws path: fd ready -> loop.c -> tp_lws.c's poll handler -> lws_service_fd()
 *   -> lws' protocol callback (tp_lws.c) -> tp_up.lws.receive = rx_lws_receive (rx.c)
 *   and tp_up.lws.* (sm.c) -> JS as above; lws' framing of our sends: fr_lws.c.
 */
#include "service.h"
#include "frame.h"
#include "jsconn.h"
#include "jsev.h"
#include "loop.h"
#include "pool.h"
#include "rx.h"
#include "sm.h"
#include "tp_lws.h"
#include "tp_tcp.h"
#include "tp_tls.h"
#include "upgrade.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

JSClassID js_lws_handle_class_id;

typedef struct {
    JSValue pollfn; /* (fd, mask) => void, mask: 1 read, 2 write, 0 remove */
} handle_data;

static JSValue g_handle;               /* weak: the handle object (not counted) */
static uint64_t g_services, g_ticks;

/* ------------------------------------------------------------------ */
/* the callback tables                                                   */

/* loop_up.notify: register fd with the qjs event loop */
static void poll_notify(int fd, int mask)
{
    handle_data *hd;
    JSValue argv[2];
    if (JSB.destroying || !JSB.ctx)
        return;
    hd = JS_GetOpaque(g_handle, js_lws_handle_class_id);
    if (!hd || JS_IsUndefined(hd->pollfn))
        return;
    argv[0] = JS_NewInt32(JSB.ctx, fd);
    argv[1] = JS_NewInt32(JSB.ctx, mask);
    call_js(JSB.ctx, hd->pollfn, JS_UNDEFINED, 2, (JSValueConst *)argv);
}

static const struct loop_up loop_up = { .notify = poll_notify };

static const struct tp_up tp_up = {
    .io = own_io, .gone = sm_tp_gone,
    .lws = {
        /* the state machine */
        .status = sm_tp_status, .close_body = sm_tp_close_body, .established = sm_tp_established,
        .opened = sm_tp_opened, .peer_close = sm_tp_peer_close, .error = sm_tp_error,
        .closed = sm_tp_closed, .destroyed = sm_tp_destroyed,
        /* the receive path, our framing */
        .receive = rx_lws_receive, .writable = fr_writable, .take = fr_take,
    },
};

static const struct fr_up fr_up = { .rx = conn_rx, .sink = conn_rx_sink, .opened = sm_fr_opened };

static const struct sm_up sm_up = {
    .open = ev_sm_open, .error = ev_sm_error, .close = ev_sm_close, .detach = conn_detach_sm,
};

void service_init(void)
{
    tp_tcp_init(&tp_up);
    tp_tls_init(&tp_up);
    fr_init(&fr_up);
    upg_init(&fr_up);
    sm_init(&sm_up);
}

/* ------------------------------------------------------------------ */
/* JS: handle class                                                       */

static void handle_finalizer(JSRuntime *rt, JSValue val)
{
    handle_data *hd = JS_GetOpaque(val, js_lws_handle_class_id);
    if (!hd)
        return;
    JSB.destroying = 1;
    tp_lws_destroy();
    tp_tls_destroy();
    loop_destroy();
    pool_destroy();
    fr_destroy();
    JS_FreeValueRT(rt, hd->pollfn);
    jsb_destroy(rt);
    js_free_rt(rt, hd);
    g_handle = JS_UNDEFINED;
}

static void handle_mark(JSRuntime *rt, JSValueConst val, JS_MarkFunc *mark_func)
{
    handle_data *hd = JS_GetOpaque(val, js_lws_handle_class_id);
    if (hd) {
        JS_MarkValue(rt, hd->pollfn, mark_func);
        jsb_mark(rt, mark_func);
    }
}

JSClassDef handle_class = {
    "LwsHandle",
    .finalizer = handle_finalizer,
    .gc_mark = handle_mark,
};

/* init(pollfn, evfn, msgfn, dispfn, errfn) -> handle */
JSValue js_init(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    handle_data *hd;
    JSValue obj;
    UNUSED(this_val);

    if (loop_inited())
        return JS_ThrowInternalError(ctx, "quickjs-websocket: already initialised");
    if (argc < 5 || !JS_IsFunction(ctx, argv[0]) || !JS_IsFunction(ctx, argv[1]) ||
        !JS_IsFunction(ctx, argv[2]) || !JS_IsFunction(ctx, argv[3]) ||
        !JS_IsFunction(ctx, argv[4]))
        return JS_ThrowTypeError(ctx, "init(pollfn, evfn, msgfn, dispfn, errfn): functions expected");

    tp_lws_log_level(getenv("QJSWS_LWS_LOG"));

    if (loop_init(&loop_up) < 0)
        return JS_ThrowInternalError(ctx, "epoll_create1: %s", strerror(errno));

    pool_init();

    obj = jsb_new_object(ctx, js_lws_handle_class_id, sizeof(*hd), (void **)&hd);
    if (JS_IsException(obj))
        return obj;
    hd->pollfn = JS_DupValue(ctx, argv[0]);
    jsb_init(ctx, argv[1], argv[2], argv[3], argv[4]);
    JS_SetOpaque(obj, hd);
    g_handle = obj;
    tp_lws_init(&tp_up); /* its context: at the first connection lws sets up */
    return obj;
}

/* ------------------------------------------------------------------ */
/* service                                                               */

/* what must be current before control returns to the qjs loop */
static JSValue service_done(JSContext *ctx, int r)
{
    buf_publish(); /* what the flushes (and lws' writes) drained */
    loop_leave();
    return JS_NewBool(ctx, r);
}

/* end of service_fd()/tick(): pending lws work, then our flushes (and kills:
 * their close events still count as inside the service call) */
static JSValue service_end(JSContext *ctx)
{
    int r = tp_lws_service_pending();
    fr_post_service();
    return service_done(ctx, r);
}

/* the start of service() and tick(): 0 if not initialised */
static inline int service_begin(uint64_t *count)
{
    if (!loop_inited())
        return 0;
    (*count)++;
    loop_enter();
    return 1;
}

/* service(): batch mode wakeup; services every ready socket */
JSValue js_service(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int round;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!service_begin(&g_services))
        return JS_FALSE;
    tp_lws_connected();
    for (round = 0;; round++) {
        int r;
        loop_poll();
        r = tp_lws_service_pending();
        fr_post_service(); /* flushes and kills: close events, handlers */
        /*
         * A connection started from a handler of this wakeup (e.g. the next
         * one, from the close handler of the last) is usually connected by
         * the time connect() returned (loopback, or a fast network): look
         * once more, so that its request goes out now rather than after a
         * trip through the qjs loop for a readiness that is already there.
         */
        if (!tp_lws_connected() || round)
            return service_done(ctx, r);
        loop_flush(); /* its POLLOUT interest, recorded by lws */
    }
}

/* service_fd(fd, revents_mask): non-batch mode, one socket per wakeup */
JSValue js_service_fd(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int fd, mask;
    short events;
    UNUSED(this_val);
    UNUSED(argc);
    if (!loop_inited())
        return JS_FALSE;
    if (JS_ToInt32(ctx, &fd, argv[0]) || JS_ToInt32(ctx, &mask, argv[1]))
        return JS_EXCEPTION;
    g_services++;
    loop_enter();
    events = (short)(((mask & 1) ? POLLIN : 0) | ((mask & 2) ? POLLOUT : 0));
    loop_ready(fd, events, events);
    return service_end(ctx);
}

/* tick(): lws timers + anything pending; returns 1 if more pending */
JSValue js_tick(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (service_begin(&g_ticks)) {
        fr_read_all(); /* before lws' own poll() */
        fr_tick();     /* idle: the kept output blocks trimmed */
        loop_expire();
        tp_lws_service_timers();
        return service_end(ctx);
    }
    return JS_FALSE;
}

/* active(): number of live connections */
JSValue js_active(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    return JS_NewInt32(ctx, jsconn_count());
}

JSValue js_pool_stats(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue o = JS_NewObject(ctx);
    struct pool_stats st;
    struct tls_stats ts;
    size_t spares, spare_bytes;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    pool_stats_get(&st);
    fr_spares(&spares, &spare_bytes);
    JS_SetPropertyStr(ctx, o, "blocks", JS_NewInt32(ctx, st.blocks));
    JS_SetPropertyStr(ctx, o, "free", JS_NewInt32(ctx, st.free));
    JS_SetPropertyStr(ctx, o, "hits", JS_NewInt64(ctx, (int64_t)st.hits));
    JS_SetPropertyStr(ctx, o, "misses", JS_NewInt64(ctx, (int64_t)st.misses));
    JS_SetPropertyStr(ctx, o, "services", JS_NewInt64(ctx, (int64_t)g_services));
    JS_SetPropertyStr(ctx, o, "service_fds", JS_NewInt64(ctx, (int64_t)loop_serviced()));
    JS_SetPropertyStr(ctx, o, "ticks", JS_NewInt64(ctx, (int64_t)g_ticks));
    JS_SetPropertyStr(ctx, o, "own_writes", JS_NewInt64(ctx, (int64_t)fr_writes()));
    JS_SetPropertyStr(ctx, o, "own_reads", JS_NewInt64(ctx, (int64_t)fr_reads()));
    JS_SetPropertyStr(ctx, o, "own_sunk", JS_NewInt64(ctx, (int64_t)fr_sunk()));
    JS_SetPropertyStr(ctx, o, "out_spares", JS_NewInt64(ctx, (int64_t)spares));
    JS_SetPropertyStr(ctx, o, "out_spare_bytes", JS_NewInt64(ctx, (int64_t)spare_bytes));
    JS_SetPropertyStr(ctx, o, "connections", JS_NewInt32(ctx, jsconn_count()));
    tp_tls_stats(&ts);
    JS_SetPropertyStr(ctx, o, "tls_read_wants_write", JS_NewInt64(ctx, (int64_t)ts.rd_want_write));
    JS_SetPropertyStr(ctx, o, "tls_write_wants_read", JS_NewInt64(ctx, (int64_t)ts.wr_want_read));
    JS_SetPropertyStr(ctx, o, "tls_staged", JS_NewInt64(ctx, (int64_t)ts.staged));
    JS_SetPropertyStr(ctx, o, "tls_kept", JS_NewInt64(ctx, (int64_t)ts.kept));
    JS_SetPropertyStr(ctx, o, "tls_held_out", JS_NewInt64(ctx, (int64_t)ts.held_out));
    JS_SetPropertyStr(ctx, o, "tls_handshakes", JS_NewInt64(ctx, (int64_t)ts.handshakes));
    JS_SetPropertyStr(ctx, o, "tls_resumed", JS_NewInt64(ctx, (int64_t)ts.resumed));
    return o;
}
