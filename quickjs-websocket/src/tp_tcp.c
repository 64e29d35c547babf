/*
 * The raw TCP transport: resolve, a non-blocking connect() to each address in
 * turn, plain recv/send/sendmsg, the socket's poll events in the event loop,
 * the timeouts (connect and handshake, close acknowledgement) and the final
 * close, which reports the connection gone.
 *
 * socket() makes the socket non-blocking and close-on-exec itself (no fcntl);
 * TCP_NODELAY as lws sets it.  Host names are resolved with getaddrinfo()
 * (blocking, as lws does; up to four addresses tried in turn); numeric ones
 * need no lookup.
 */
#include "tp_tcp.h"
#include "loop.h"
#include "opts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TCP_ADDRS 4

/* while connecting (t->priv) */
struct tcp_addrs {
    struct sockaddr_storage addr[TCP_ADDRS];
    socklen_t alen[TCP_ADDRS];
    int naddr, next; /* addresses, the one to try next */
};

static struct tp_up up;

void tp_tcp_init(const struct tp_up *u)
{
    up = *u;
}

/* the addresses of host (numeric, or resolved: blocking, as lws does) */
static const char *resolve(struct tcp_addrs *d, const char *host, int port)
{
    struct sockaddr_in *s4 = (struct sockaddr_in *)&d->addr[0];
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&d->addr[0];
    struct addrinfo hints, *res, *ai;
    char service[8];

    memset(s6, 0, sizeof(*s6));
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        d->alen[0] = sizeof(*s4);
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        d->alen[0] = sizeof(*s6);
    }
    if (d->alen[0]) { /* numeric: no lookup */
        d->naddr = 1;
        return NULL;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(host, service, &hints, &res) != 0)
        return "host name lookup failed";
    for (ai = res; ai && d->naddr < TCP_ADDRS; ai = ai->ai_next) {
        if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
            ai->ai_addrlen > sizeof(d->addr[0]))
            continue;
        memcpy(&d->addr[d->naddr], ai->ai_addr, ai->ai_addrlen);
        d->alen[d->naddr++] = ai->ai_addrlen;
    }
    freeaddrinfo(res);
    return d->naddr ? NULL : "host name lookup failed";
}

static void drop_fd(struct tp *t)
{
    if (t->fd < 0)
        return;
    if (t->ev)
        loop_fd_del(t->fd);
    close(t->fd);
    t->fd = -1;
    t->ev = 0;
}

static void free_addrs(struct tp *t)
{
    free(t->priv);
    t->priv = NULL;
}

/* the socket and connect() for the next address that takes them (on loopback
 * the connection is usually up when connect() returns): 0 under way, -1 every
 * address failed at once (*why) */
static int tcp_retry(struct tp *t, const char **why)
{
    struct tcp_addrs *d = t->priv;
    while (d && d->next < d->naddr) {
        int i = d->next++, one = 1, fd;
        drop_fd(t);
        fd = socket(d->addr[i].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            *why = "socket() failed";
            continue;
        }
        if (fd >= LOOP_FD_MAX) {
            close(fd);
            *why = "too many open sockets";
            return -1;
        }
        t->fd = fd;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, (struct sockaddr *)&d->addr[i], d->alen[i]) < 0 && errno != EINPROGRESS) {
            *why = "connection refused";
            continue;
        }
        return 0;
    }
    drop_fd(t);
    return -1;
}

static void tcp_abandon(struct tp *t);

static int tcp_open(struct tp *t, const char *host, int port, const char **why)
{
    struct tcp_addrs *d = malloc(sizeof(*d));
    if (!d) {
        *why = "out of memory";
        return -1;
    }
    d->naddr = d->next = 0;
    d->alen[0] = 0;
    t->priv = d;
    if ((*why = resolve(d, host, port)) != NULL || tcp_retry(t, why) < 0) {
        tcp_abandon(t);
        return -1;
    }
    t->sock = 1;
    return 0;
}

static void tcp_ready(void *opaque, int fd, short events, short revents)
{
    UNUSED(fd);
    UNUSED(events);
    up.io(opaque, revents);
}

static void tcp_expired(void *opaque);

static const struct loop_handler tcp_handler = { tcp_ready, tcp_expired };

void tp_tcp_watch(struct tp *t, int events, const struct loop_handler *h)
{
    if (t->ev == events)
        return;
    if (t->ev) {
        loop_fd_mod(t->fd, events, t->ev);
    } else {
        loop_fd_add(t->fd, events, h, t);
        if (t->deadline)
            loop_fd_deadline(t->fd, t->deadline);
    }
    t->ev = events;
}

/* the events the layer above wants: POLLIN, POLLOUT (level-triggered: POLLOUT
 * only while something waits to be written) */
static void tcp_poll(struct tp *t, int events)
{
    tp_tcp_watch(t, events, &tcp_handler);
}

/* the end of our direction: FIN after what the socket holds */
static int tcp_shutdown(struct tp *t)
{
    return shutdown(t->fd, SHUT_WR);
}

static void tcp_timeout(struct tp *t, int secs, const char *why)
{
    t->deadline = secs ? loop_now_ms() + secs * 1000 : 0;
    t->deadline_why = why;
    if (t->ev)
        loop_fd_deadline(t->fd, t->deadline);
}

/* the connection is over: socket closed, reported (may free t) */
static void tcp_close(struct tp *t, const char *why)
{
    free_addrs(t);
    drop_fd(t);
    t->sock = 0;
    t->deadline = 0;
    up.gone(t, why);
}

static void tcp_expired(void *opaque)
{
    struct tp *t = opaque;
    tcp_close(t, t->deadline_why);
}

static void tcp_abandon(struct tp *t)
{
    free_addrs(t);
    if (t->fd >= 0) {
        loop_fd_forget(t->fd, t->ev != 0);
        close(t->fd); /* leaves the epoll set with it */
        t->fd = -1;
        t->ev = 0;
    }
    t->sock = 0;
}

const struct tp_ops tp_tcp = {
    .name = "tcp", .open = tcp_open, .retry = tcp_retry,
    .read = tp_fd_read, .write = tp_fd_write, .writev = tp_fd_writev, .pending = NULL,
    .poll = tcp_poll, .shutdown = tcp_shutdown, .timeout = tcp_timeout, .close = tcp_close,
    .abandon = tcp_abandon,
    .release = NULL, .flags = 0,
};
