/*
 * The process-wide lws context (the JS "handle" object made by init()) and
 * the event-loop glue: poll callbacks, epoll batching, service()/tick().
 */
#include "qjsws.h"
#include "conn.h"
#include "dial.h"
#include "frame.h"
#include "loop.h"
#include "pool.h"

JSClassID js_lws_handle_class_id;

struct qjsws_globals G = { .epfd = -1 }; /* evfn, msgfn: 0 (an int) until init() */

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
    call_js(G.jsctx, hd->pollfn, JS_UNDEFINED, 2, (JSValueConst *)argv);
}

static int lws_to_mask(int ev)
{
    return ((ev & POLLIN) ? 1 : 0) | ((ev & POLLOUT) ? 2 : 0);
}

static uint32_t lws_to_epoll(int ev)
{
    return ((ev & POLLIN) ? EPOLLIN : 0) | ((ev & POLLOUT) ? EPOLLOUT : 0);
}

static void epoll_apply(int op, int fd, int events)
{
    struct epoll_event ee;
    memset(&ee, 0, sizeof(ee));
    ee.events = lws_to_epoll(events);
    ee.data.u64 = ((uint64_t)(uint32_t)events << 32) | (uint32_t)fd;
    if (epoll_ctl(G.epfd, op, fd, &ee) < 0 && op != EPOLL_CTL_DEL)
        lwsl_err("epoll_ctl(%d, fd %d): %s\n", op, fd, strerror(errno));
}

/*
 * lws changes a socket's poll events several times per wakeup (a connecting
 * socket: POLLIN, POLLIN|POLLOUT, POLLIN, POLLIN again, POLLIN|POLLOUT after
 * the request went out, ...), often to what is already registered: 12
 * epoll_ctl calls per handshake.  For fds below FDMAP_MAX the registered
 * events are remembered, a change to the same events costs nothing, and
 * inside a service call changes only record the wanted events: the epoll set
 * is brought up to date once, at the end of the call (epoll_flush, before
 * control returns to the qjs loop, which is the only place that waits on
 * it).  Additions and removals are done at once.
 */
static struct {
    int32_t reg[FDMAP_MAX];  /* registered events + 1, 0: not registered */
    int32_t want[FDMAP_MAX]; /* wanted events (valid while pending) */
    uint8_t pending[FDMAP_MAX];
    int list[FDMAP_MAX];     /* fds with a pending change */
    int n;
} EP;

static void epoll_set(int op, int fd, int events)
{
    if (fd < 0 || fd >= FDMAP_MAX) {
        epoll_apply(op, fd, events);
        return;
    }
    if (op == EPOLL_CTL_MOD) {
        if (G.in_service && EP.reg[fd]) {
            EP.want[fd] = events;
            if (!EP.pending[fd]) {
                EP.pending[fd] = 1;
                EP.list[EP.n++] = fd;
            }
            return;
        }
        if (EP.reg[fd] == events + 1)
            return;
    }
    EP.pending[fd] = 0; /* an addition or removal supersedes a pending change */
    epoll_apply(op, fd, events);
    EP.reg[fd] = op == EPOLL_CTL_DEL ? 0 : events + 1;
}

/* end of a service call: apply the changes it made */
static void epoll_flush(void)
{
    int i;
    for (i = 0; i < EP.n; i++) {
        int fd = EP.list[i];
        if (!EP.pending[fd])
            continue;
        EP.pending[fd] = 0;
        if (EP.reg[fd] && EP.reg[fd] != EP.want[fd] + 1) {
            epoll_apply(EPOLL_CTL_MOD, fd, EP.want[fd]);
            EP.reg[fd] = EP.want[fd] + 1;
        }
    }
    EP.n = 0;
}

static int own_events(int fd, int events)
{
    if (fd >= 0 && fd < FDMAP_MAX && g_fdmap[fd] && g_fdmap[fd]->own_rx)
        events |= POLLIN;
    return events;
}

/* batch: a socket joins / changes / leaves our epoll set (lws' through the
 * poll callbacks below, ours from dial.c) */
void loop_fd_add(int fd, int events)
{
    G.nfds++;
    epoll_set(EPOLL_CTL_ADD, fd, events);
    if (!G.ep_registered) {
        G.ep_registered = 1;
        poll_notify(G.epfd, 1);
    }
}

void loop_fd_mod(int fd, int events)
{
    epoll_set(EPOLL_CTL_MOD, fd, events);
}

void loop_fd_del(int fd)
{
    if (G.nfds > 0)
        G.nfds--;
    epoll_set(EPOLL_CTL_DEL, fd, 0);
    /* the epoll fd leaves the qjs loop (so that qjs can exit) when its last
     * socket went; inside a service call only at its end, which spares the
     * two calls when a handler opens the next connection */
    if (G.nfds == 0 && !G.in_service && G.ep_registered) {
        G.ep_registered = 0;
        poll_notify(G.epfd, 0);
    }
}

void poll_add(struct lws_pollargs *pa)
{
    if (OPT(OPT_BATCH)) {
        loop_fd_add(pa->fd, pa->events);
    } else {
        G.nfds++;
        poll_notify(pa->fd, lws_to_mask(pa->events));
    }
}

void poll_del(struct lws_pollargs *pa)
{
    if (OPT(OPT_BATCH)) {
        loop_fd_del(pa->fd);
    } else {
        if (G.nfds > 0)
            G.nfds--;
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
    JS_FreeValueRT(rt, G.evfn);
    JS_FreeValueRT(rt, G.msgfn);
    G.evfn = G.msgfn = JS_UNDEFINED;
    js_free_rt(rt, hd);
    G.jsctx = NULL;
    G.handle = JS_UNDEFINED;
}

static void handle_mark(JSRuntime *rt, JSValueConst val, JS_MarkFunc *mark_func)
{
    handle_data *hd = JS_GetOpaque(val, js_lws_handle_class_id);
    if (hd) {
        JS_MarkValue(rt, hd->pollfn, mark_func);
        JS_MarkValue(rt, G.evfn, mark_func);
        JS_MarkValue(rt, G.msgfn, mark_func);
    }
}

JSClassDef handle_class = {
    "LwsHandle",
    .finalizer = handle_finalizer,
    .gc_mark = handle_mark,
};

/*
 * lws finds a socket's wsi through a table.  With no fd_limit_per_thread it
 * sizes the table by the fd limit (ulimit -n) and indexes it by fd; with a
 * smaller fd_limit_per_thread it scans that many slots instead, for every
 * socket it services and twice, in full, for every connection it closes
 * (12,000 instructions per handshake with 1024 slots).  So let lws index when
 * its tables stay small (two of 8 bytes per fd: 1 MiB at 65,536 fds, zeroed
 * at creation); under a larger limit keep 1024 slots (1024 connections) and
 * the scans rather than touching tens of MiB.
 */
static unsigned lws_fd_limit(void)
{
    long open_max = sysconf(_SC_OPEN_MAX);
    return open_max > 0 && open_max <= 65536 ? 0 : 1024;
}

/* init(pollfn, evfn, msgfn) -> handle */
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
    if (argc < 3 || !JS_IsFunction(ctx, argv[0]) || !JS_IsFunction(ctx, argv[1]) ||
        !JS_IsFunction(ctx, argv[2]))
        return JS_ThrowTypeError(ctx, "init(pollfn, evfn, msgfn): functions expected");

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
    info.fd_limit_per_thread = lws_fd_limit();

    obj = JS_NewObjectClass(ctx, (int)js_lws_handle_class_id);
    if (JS_IsException(obj))
        return obj;
    hd = js_mallocz(ctx, sizeof(*hd));
    if (!hd) {
        JS_FreeValue(ctx, obj);
        return JS_EXCEPTION;
    }
    hd->pollfn = JS_DupValue(ctx, argv[0]);
    G.evfn = JS_DupValue(ctx, argv[1]);
    G.msgfn = JS_DupValue(ctx, argv[2]);
    JS_SetOpaque(obj, hd);
    G.jsctx = ctx;
    G.rt = JS_GetRuntime(ctx);
    G.handle = obj;
    G.destroying = 0;
    G.ep_registered = 0;
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
        G.lws_in = 1;
        lws_service_tsi(G.ctx, -1, 0);
        G.lws_in = 0;
    }
    own_handover();
    return !lws_service_adjust_timeout(G.ctx, 1, 0);
}

static JSValue service_done(JSContext *ctx, int r);

/* end of service()/service_fd()/tick(): pending lws work, then our flushes
 * (and kills: their close events still count as inside the service call) */
static JSValue service_end(JSContext *ctx)
{
    int r = service_pending();
    own_post_service();
    return service_done(ctx, r);
}

/* ... and what must be current before control returns to the qjs loop */
static JSValue service_done(JSContext *ctx, int r)
{
    buf_publish(); /* what the flushes (and lws' writes) drained */
    epoll_flush();
    if (G.nfds == 0 && G.ep_registered) {
        G.ep_registered = 0;
        poll_notify(G.epfd, 0);
    }
    G.in_service--;
    return JS_NewBool(ctx, r);
}

/* service(): batch mode wakeup; services every ready lws socket */
JSValue js_service(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct epoll_event evs[64];
    int n, i, round;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!G.ctx)
        return JS_FALSE;
    G.services++;
    G.in_service++;
    G.connected = 0;
    for (round = 0;; round++) {
        int r;
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
        r = service_pending();
        own_post_service(); /* flushes and kills: close events, handlers */
        /*
         * A connection started from a handler of this wakeup (e.g. the next
         * one, from the close handler of the last) is usually connected by
         * the time connect() returned (loopback, or a fast network): look
         * once more, so that its request goes out now rather than after a
         * trip through the qjs loop for a readiness that is already there.
         */
        if (!G.connected || round)
            return service_done(ctx, r);
        G.connected = 0;
        epoll_flush(); /* its POLLOUT interest, recorded by lws */
    }
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
    raw_expire();
    G.lws_in = 1;
    lws_service(G.ctx, -1);
    G.lws_in = 0;
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
