/*
 * The process-wide lws context (the JS "handle" object made by init()) and
 * the event-loop glue: poll callbacks, epoll batching, service()/tick().
 */
#include "qjsws.h"
#include "conn.h"
#include "frame.h"
#include "loop.h"
#include "pool.h"

JSClassID js_lws_handle_class_id;

struct qjsws_globals G = { .epfd = -1 };

typedef struct {
    JSValue pollfn; /* (fd, mask) => void, mask: 1 read, 2 write, 0 remove */
} handle_data;

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

void poll_add(struct lws_pollargs *pa)
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

void poll_del(struct lws_pollargs *pa)
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

void poll_change(struct lws_pollargs *pa)
{
    if (OPT(OPT_BATCH)) {
        epoll_set(EPOLL_CTL_MOD, pa->fd, own_events(pa->fd, pa->events));
    } else {
        int mask = lws_to_mask(own_events(pa->fd, pa->events));
        if (mask != lws_to_mask(own_events(pa->fd, pa->prev_events)))
            poll_notify(pa->fd, mask);
    }
}

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
    if (G.atom_buffered != JS_ATOM_NULL) {
        JS_FreeAtomRT(rt, G.atom_buffered);
        G.atom_buffered = JS_ATOM_NULL;
    }
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

JSClassDef handle_class = {
    "LwsHandle",
    .finalizer = handle_finalizer,
    .gc_mark = handle_mark,
};

/* init(pollfn) -> handle */
JSValue js_init(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
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
    info.protocols = qjsws_protocols;
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
    G.rt = JS_GetRuntime(ctx);
    G.handle = obj;
    G.destroying = 0;
    G.atom_buffered = JS_NewAtom(ctx, "bufferedAmount");

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
        own_handover();
        if (lws_service_adjust_timeout(G.ctx, 1, 0))
            return 0;
        lws_service_tsi(G.ctx, -1, 0);
    }
    own_handover();
    return !lws_service_adjust_timeout(G.ctx, 1, 0);
}

/* end of service()/service_fd()/tick(): pending lws work, then our flushes
 * (and kills: their close events still count as inside the service call) */
static JSValue service_end(JSContext *ctx)
{
    int r = service_pending();
    own_post_service();
    buf_publish(); /* what the flushes (and lws' writes) drained */
    G.in_service--;
    return JS_NewBool(ctx, r);
}

/* service(): batch mode wakeup; services every ready lws socket */
JSValue js_service(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
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
    return service_end(ctx);
}

/* service_fd(fd, revents_mask): non-batch mode, one socket per wakeup */
JSValue js_service_fd(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
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
    return service_end(ctx);
}

/* tick(): lws timers + anything pending; returns 1 if more pending */
JSValue js_tick(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!G.ctx)
        return JS_FALSE;
    G.ticks++;
    G.in_service++;
    own_read_all();
    lws_service(G.ctx, -1);
    return service_end(ctx);
}

/* active(): number of live connections */
JSValue js_active(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    return JS_NewInt32(ctx, G.nconns);
}
