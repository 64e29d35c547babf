/*
 * The event loop (loop.c): the sockets' readiness, with a handler per fd,
 * coarse per-fd deadlines, and the depth of the current service call.  It
 * knows nothing of connections, libwebsockets or JS.
 *
 * With "batch" (the default) every socket sits in one epoll set and only the
 * epoll fd is registered with the qjs event loop; with "batch" off each socket
 * is registered with qjs on its own.  Registering with qjs is JS's business:
 * the loop asks for it through loop_up.notify, set at init.
 */
#ifndef QJSWS_LOOP_H
#define QJSWS_LOOP_H

#include <stdint.h>
#include <time.h>

#pragma GCC visibility push(hidden)

/* fds below this: epoll changes batched per service call; our own sockets
 * (tp_tcp.c) and our framing's fd map (frame.c) stay below it.  Above any
 * hard RLIMIT_NOFILE we meet (20,000 on the machines wsbench runs on); the
 * tables are BSS, so only the pages of descriptors in use become resident,
 * and the per-tick scans stop at the highest descriptor used (loop_fd_top). */
#define LOOP_FD_MAX 32768

/* what a socket's owner is told (a transport: tp_tcp.c, tp_lws.c) */
struct loop_handler {
    /* the socket is ready: revents (POLLIN, POLLOUT, POLLHUP, POLLERR) for the
     * events it is registered with */
    void (*ready)(void *opaque, int fd, short events, short revents);
    /* its deadline (loop_fd_deadline) passed; checked by loop_expire() */
    void (*expired)(void *opaque);
};

/* set at init by the layer above (service.c) */
struct loop_up {
    /* register fd with the JS event loop, mask 1 read, 2 write, 0 remove: the
     * epoll fd with "batch", each socket without */
    void (*notify)(int fd, int mask);
};

/* the epoll set; 0, or -1 (errno) */
int loop_init(const struct loop_up *up);
void loop_destroy(void);
/* the epoll set exists (init() was called) */
int loop_inited(void);

/* a socket joins the loop with poll events (POLLIN, POLLOUT) and its handler */
void loop_fd_add(int fd, int events, const struct loop_handler *h, void *opaque);
/* its events change (prev: what they were, for the qjs registration without "batch") */
void loop_fd_mod(int fd, int events, int prev);
/* it leaves (before it is closed) */
void loop_fd_del(int fd);
/* it was closed without loop_fd_del (runtime teardown): forget it, no call;
 * `added`: it had been added */
void loop_fd_forget(int fd, int added);
/* the handler's opaque of a socket that is in the loop (NULL otherwise) */
void *loop_fd_data(int fd);
void loop_fd_set_data(int fd, void *opaque);
/* call its handler's expired() once loop_now_ms() >= when (0: no deadline);
 * fds below LOOP_FD_MAX that are in the loop */
extern int64_t loop_deadline[LOOP_FD_MAX];
/* 1 + the highest fd below LOOP_FD_MAX ever added to the loop */
extern int loop_fd_top;
static inline void loop_fd_deadline(int fd, int64_t when)
{
    if (fd >= 0 && fd < LOOP_FD_MAX)
        loop_deadline[fd] = when;
}

/* monotonic, coarse */
static inline int64_t loop_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
/* the housekeeping tick: the handlers of the sockets whose deadline passed */
void loop_expire(void);

/* inside a service call (service.c): epoll changes are recorded and applied
 * at its end, so that a socket's events can change many times for one call */
extern int loop_depth;
static inline int loop_in_service(void)
{
    return loop_depth;
}
void loop_enter(void);
void loop_flush(void); /* apply the recorded changes now */
void loop_leave(void); /* apply them; unregister the epoll fd from qjs if no socket is left */

/* batch: every ready socket's handler (epoll_wait without waiting) */
void loop_poll(void);
/* one socket's handler (qjs said it is ready, without "batch") */
void loop_ready(int fd, short events, short revents);
/* handler calls so far (pool_stats()) */
uint64_t loop_serviced(void);
/* sockets in the loop */
int loop_nfds(void);

#pragma GCC visibility pop

#endif
