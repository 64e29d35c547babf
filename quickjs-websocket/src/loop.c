/*
 * The event loop: the epoll set (or the per-socket qjs registration), the
 * handler and deadline of each socket, epoll changes batched per service call.
 */
#include "loop.h"
#include "opts.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct slot {
    const struct loop_handler *h; /* NULL: not in the loop */
    void *opaque;
};

int loop_depth; /* inside service()/service_fd()/tick() */
int64_t loop_deadline[LOOP_FD_MAX]; /* ms, 0: none */
int loop_fd_top;

static struct {
    int epfd;
    int nfds;       /* sockets in the loop */
    int registered; /* batch: the epoll fd is registered with qjs */
    uint64_t serviced;
    struct loop_up up;
    struct slot near[LOOP_FD_MAX];
    struct slot *far; /* fds from LOOP_FD_MAX on (libwebsockets' under a large ulimit -n) */
    int nfar;
} L = { .epfd = -1 };

static struct slot *slot_of(int fd)
{
    if (fd >= 0 && fd < LOOP_FD_MAX)
        return &L.near[fd];
    if (fd >= LOOP_FD_MAX && fd - LOOP_FD_MAX < L.nfar)
        return &L.far[fd - LOOP_FD_MAX];
    return NULL;
}

/* a slot for fd, growing the far table if needed; NULL if out of memory */
static struct slot *slot_make(int fd)
{
    struct slot *s = slot_of(fd);
    if (!s && fd >= LOOP_FD_MAX) {
        int n = (fd - LOOP_FD_MAX + 1) * 2;
        struct slot *far = realloc(L.far, (size_t)n * sizeof(*far));
        if (!far) {
            fprintf(stderr, "quickjs-websocket: out of memory for socket %d\n", fd);
            return NULL;
        }
        memset(far + L.nfar, 0, (size_t)(n - L.nfar) * sizeof(*far));
        L.far = far;
        L.nfar = n;
        s = &L.far[fd - LOOP_FD_MAX];
    }
    return s;
}

int loop_init(const struct loop_up *up)
{
    L.up = *up;
    L.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (L.epfd < 0)
        return -1;
    L.registered = 0;
    return 0;
}

int loop_inited(void)
{
    return L.epfd >= 0;
}

void loop_destroy(void)
{
    if (L.epfd >= 0) {
        close(L.epfd);
        L.epfd = -1;
    }
    free(L.far);
    L.far = NULL;
    L.nfar = 0;
}

static int poll_to_mask(int ev)
{
    return ((ev & POLLIN) ? 1 : 0) | ((ev & POLLOUT) ? 2 : 0);
}

static uint32_t poll_to_epoll(int ev)
{
    return ((ev & POLLIN) ? EPOLLIN : 0) | ((ev & POLLOUT) ? EPOLLOUT : 0);
}

static void epoll_apply(int op, int fd, int events)
{
    struct epoll_event ee;
    memset(&ee, 0, sizeof(ee));
    ee.events = poll_to_epoll(events);
    ee.data.u64 = ((uint64_t)(uint32_t)events << 32) | (uint32_t)fd;
    if (epoll_ctl(L.epfd, op, fd, &ee) < 0 && op != EPOLL_CTL_DEL)
        fprintf(stderr, "quickjs-websocket: epoll_ctl(%d, fd %d): %s\n", op, fd, strerror(errno));
}

/*
 * libwebsockets changes a socket's poll events several times per wakeup (a
 * connecting socket: POLLIN, POLLIN|POLLOUT, POLLIN, POLLIN again,
 * POLLIN|POLLOUT after the request went out, ...), often to what is already
 * registered: 12 epoll_ctl calls per handshake.  For fds below LOOP_FD_MAX the
 * registered events are remembered, a change to the same events costs
 * nothing, and inside a service call changes only record the wanted events:
 * the epoll set is brought up to date once, at the end of the call
 * (epoll_flush, before control returns to the qjs loop, which is the only
 * place that waits on it).  Additions and removals are done at once.
 */
static struct {
    int32_t reg[LOOP_FD_MAX];  /* registered events + 1, 0: not registered */
    int32_t want[LOOP_FD_MAX]; /* wanted events (valid while pending) */
    uint8_t pending[LOOP_FD_MAX];
    int list[LOOP_FD_MAX];     /* fds with a pending change */
    int n;
} EP;

static void epoll_set(int op, int fd, int events)
{
    if (fd < 0 || fd >= LOOP_FD_MAX) {
        epoll_apply(op, fd, events);
        return;
    }
    if (op == EPOLL_CTL_MOD) {
        if (loop_depth && EP.reg[fd]) {
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

/* apply the changes recorded since the service call began */
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

void loop_fd_add(int fd, int events, const struct loop_handler *h, void *opaque)
{
    struct slot *s = fd >= 0 && fd < LOOP_FD_MAX ? &L.near[fd] : slot_make(fd);
    if (fd >= loop_fd_top && fd < LOOP_FD_MAX)
        loop_fd_top = fd + 1;
    if (s) {
        s->h = h;
        s->opaque = opaque;
    }
    L.nfds++;
    if (!OPT(OPT_BATCH)) {
        L.up.notify(fd, poll_to_mask(events));
        return;
    }
    epoll_set(EPOLL_CTL_ADD, fd, events);
    if (!L.registered) {
        L.registered = 1;
        L.up.notify(L.epfd, 1);
    }
}

void loop_fd_mod(int fd, int events, int prev)
{
    if (!OPT(OPT_BATCH)) {
        int mask = poll_to_mask(events);
        if (mask != poll_to_mask(prev))
            L.up.notify(fd, mask);
        return;
    }
    epoll_set(EPOLL_CTL_MOD, fd, events);
}

static void slot_clear(int fd)
{
    struct slot *s = slot_of(fd);
    if (s) {
        s->h = NULL;
        s->opaque = NULL;
    }
    loop_fd_deadline(fd, 0);
}

void loop_fd_del(int fd)
{
    slot_clear(fd);
    if (L.nfds > 0)
        L.nfds--;
    if (!OPT(OPT_BATCH)) {
        L.up.notify(fd, 0);
        return;
    }
    epoll_set(EPOLL_CTL_DEL, fd, 0);
    /* the epoll fd leaves the qjs loop (so that qjs can exit) when its last
     * socket went; inside a service call only at its end, which spares the
     * two calls when a handler opens the next connection */
    if (L.nfds == 0 && !loop_depth && L.registered) {
        L.registered = 0;
        L.up.notify(L.epfd, 0);
    }
}

void loop_fd_forget(int fd, int added)
{
    slot_clear(fd);
    if (added && L.nfds > 0)
        L.nfds--;
}

void *loop_fd_data(int fd)
{
    struct slot *s = slot_of(fd);
    return s ? s->opaque : NULL;
}

void loop_fd_set_data(int fd, void *opaque)
{
    struct slot *s = slot_of(fd);
    if (s && s->h)
        s->opaque = opaque;
}

void loop_expire(void)
{
    int64_t now = 0;
    int fd;
    for (fd = 0; fd < loop_fd_top; fd++) {
        if (!loop_deadline[fd])
            continue;
        if (!now)
            now = loop_now_ms();
        if (now >= loop_deadline[fd]) {
            loop_deadline[fd] = 0;
            if (L.near[fd].h)
                L.near[fd].h->expired(L.near[fd].opaque); /* may add or remove sockets */
        }
    }
}

void loop_enter(void)
{
    loop_depth++;
}

void loop_flush(void)
{
    epoll_flush();
}

void loop_leave(void)
{
    epoll_flush();
    if (L.nfds == 0 && L.registered) {
        L.registered = 0;
        L.up.notify(L.epfd, 0);
    }
    loop_depth--;
}

static inline void ready(int fd, short events, short revents)
{
    struct slot *s = slot_of(fd);
    L.serviced++;
    if (s && s->h)
        s->h->ready(s->opaque, fd, events, revents);
}

void loop_ready(int fd, short events, short revents)
{
    ready(fd, events, revents);
}

void loop_poll(void)
{
    struct epoll_event evs[64];
    int n, i;
    n = epoll_wait(L.epfd, evs, (int)countof(evs), 0);
    for (i = 0; i < n; i++) {
        uint32_t e = evs[i].events;
        int fd = (int)(uint32_t)(evs[i].data.u64 & 0xffffffffu);
        short events = (short)(evs[i].data.u64 >> 32);
        short revents = (short)(((e & EPOLLIN) ? POLLIN : 0) | ((e & EPOLLOUT) ? POLLOUT : 0) |
                                ((e & EPOLLHUP) ? POLLHUP : 0) | ((e & EPOLLERR) ? POLLERR : 0));
        ready(fd, events, revents);
    }
}

uint64_t loop_serviced(void)
{
    return L.serviced;
}

int loop_nfds(void)
{
    return L.nfds;
}
