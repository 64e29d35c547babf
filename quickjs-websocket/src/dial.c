/*
 * Opt "connect": ws:// connections set up without libwebsockets.
 *
 * lws' client does the connect, the upgrade request and the check of the
 * response in about 45,000 instructions per connection (its request is
 * printed with vsnprintf, the response parsed one byte per call into a
 * header table malloc'ed per connection, SHA-1 in portable C) and 22 system
 * calls; here the request is put together with memcpy, the response head is
 * checked in one pass (handshake_core.c) and the socket is made non-blocking
 * and close-on-exec by socket() itself.  The request is written right after
 * connect(): on loopback the connection is established by then; elsewhere the
 * write fails with EAGAIN and waits for POLLOUT.  Once the 101 is checked the
 * connection is on our framing (frame.c) from its first byte, so bytes that
 * came with the 101 go to our parser, and nothing is ever handed over.
 *
 * Needs "framing" (the connection's I/O is ours) and "batch" (its socket sits
 * in our epoll set); wss:// always goes through lws.  Timeouts: connect and
 * handshake 15 s (lws' default), close acknowledgement 5 s, checked by the
 * housekeeping tick (200 ms).
 */
#include "qjsws.h"
#include "conn.h"
#include "dial.h"
#include "frame.h"
#include "handshake_core.h"
#include "loop.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>

#define DIAL_ADDRS 4
#define CONNECT_TIMEOUT_S 15

struct dial {
    struct sockaddr_storage addr[DIAL_ADDRS];
    socklen_t alen[DIAL_ADDRS];
    int naddr, next;       /* addresses, the one to try next */
    size_t reqlen, reqoff; /* the request: buf[0..reqlen), written up to reqoff */
    size_t got;            /* response bytes in buf (once the request is out) */
    char accept[HS_ACCEPT_LEN + 1];
    char *protos;          /* offered subprotocols, or NULL */
    char buf[HS_HEAD_MAX];
};

int dial_wanted(int secure)
{
    unsigned need = OPT_CONNECT | OPT_FRAMING | OPT_BATCH;
    return !secure && (g_opts & need) == need;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void dial_free(conn *c)
{
    if (c->dial) {
        free(c->dial->protos);
        free(c->dial);
        c->dial = NULL;
    }
}

/* the addresses of host (numeric, or resolved: blocking, as lws does) */
static const char *resolve(struct dial *d, const char *host, int port)
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
        d->naddr = 1;
        return NULL;
    }
    if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        d->alen[0] = sizeof(*s6);
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
    for (ai = res; ai && d->naddr < DIAL_ADDRS; ai = ai->ai_next) {
        if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
            ai->ai_addrlen > sizeof(d->addr[0]))
            continue;
        memcpy(&d->addr[d->naddr], ai->ai_addr, ai->ai_addrlen);
        d->alen[d->naddr++] = ai->ai_addrlen;
    }
    freeaddrinfo(res);
    return d->naddr ? NULL : "host name lookup failed";
}

/* write what is left of the request: 0 all written, 1 wait for POLLOUT,
 * -1 failed (errno) */
static int send_request(conn *c)
{
    struct dial *d = c->dial;
    while (d->reqoff < d->reqlen) {
        ssize_t n = send(c->fd, d->buf + d->reqoff, d->reqlen - d->reqoff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 1;
            return -1;
        }
        d->reqoff += (size_t)n;
    }
    return 0;
}

static void drop_fd(conn *c)
{
    if (c->fd < 0)
        return;
    if (c->fd < FDMAP_MAX && g_fdmap[c->fd] == c)
        g_fdmap[c->fd] = NULL;
    if (c->rawev)
        loop_fd_del(c->fd);
    close(c->fd);
    c->fd = -1;
    c->rawev = 0;
}

static void set_events(conn *c, int events)
{
    if (c->rawev == events)
        return;
    if (c->rawev)
        loop_fd_mod(c->fd, events);
    else
        loop_fd_add(c->fd, events);
    c->rawev = events;
}

/*
 * Connect to the next address and write the request (on loopback the
 * connection is usually up when connect() returns).  0: under way (events
 * set), -1: every address failed at once (*why).
 */
static int try_next(conn *c, const char **why)
{
    struct dial *d = c->dial;
    while (d->next < d->naddr) {
        int i = d->next++, one = 1, fd, r;
        drop_fd(c);
        fd = socket(d->addr[i].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            *why = "socket() failed";
            continue;
        }
        if (fd >= FDMAP_MAX) {
            close(fd);
            *why = "too many open sockets";
            return -1;
        }
        c->fd = fd;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, (struct sockaddr *)&d->addr[i], d->alen[i]) < 0 && errno != EINPROGRESS) {
            *why = "connection refused";
            continue;
        }
        d->reqoff = 0;
        r = send_request(c);
        if (r < 0) {
            *why = "connection refused";
            continue;
        }
        g_fdmap[fd] = c;
        set_events(c, r ? POLLOUT : POLLIN);
        return 0;
    }
    drop_fd(c);
    return -1;
}

int dial_start(conn *c, const char *host, int port, const char *path, const char *hosthdr,
               const char *protos, const char **why)
{
    struct dial *d = malloc(sizeof(*d));
    uint8_t nonce[16];
    if (!d) {
        *why = "out of memory";
        return -1;
    }
    memset(d, 0, offsetof(struct dial, buf));
    c->dial = d;
    if (protos && *protos && !(d->protos = strdup(protos))) {
        *why = "out of memory";
        goto fail;
    }
    own_random(nonce, sizeof(nonce));
    d->reqlen = hs_request(d->buf, sizeof(d->buf), path, hosthdr, protos, nonce, d->accept);
    if (!d->reqlen) {
        *why = "upgrade request too long";
        goto fail;
    }
    if ((*why = resolve(d, host, port)) != NULL)
        goto fail;
    if (try_next(c, why) < 0)
        goto fail;
    c->raw = 1;
    c->deadline = now_ms() + CONNECT_TIMEOUT_S * 1000;
    return 0;
fail:
    dial_free(c);
    return -1;
}

/* the raw conn is over: socket closed, events reported, conn detached */
static void raw_close(conn *c, const char *why)
{
    dial_free(c);
    drop_fd(c);
    c->raw = 0;
    conn_gone(c, why); /* may free c */
}

static void dial_failed(conn *c, const char *why)
{
    /* before the first response byte, another address may do */
    if (c->dial->got == 0 && c->dial->next < c->dial->naddr && try_next(c, &why) == 0)
        return;
    raw_close(c, why);
}

/* the 101 is in: the connection is open, and ours from its first byte */
static void established(conn *c, size_t head)
{
    struct dial *d = c->dial;
    size_t rest = d->got - head;
    int full = d->got == sizeof(d->buf);
    c->deadline = 0;
    c->own = c->own_rx = 1;
    conn_opened(c);
    /* frames that came with the 101 (the rx handlers stop at a failure) */
    if (rest && c->raw && !c->kill_pending)
        conn_rx(c, (const uint8_t *)d->buf + head, rest);
    dial_free(c);
    if (full && c->raw && !c->kill_pending)
        own_read_now(c); /* the socket may hold more */
}

static void dial_io(conn *c, short revents)
{
    struct dial *d = c->dial;
    ssize_t n;
    size_t from, head;
    const char *why;

    if (c->kill_pending)
        return; /* aborted: the end of the service call closes it */
    if (d->reqoff < d->reqlen) {
        int r = send_request(c);
        if (r < 0)
            dial_failed(c, "connection refused");
        else if (r == 0)
            set_events(c, POLLIN);
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    n = recv(c->fd, d->buf + d->got, sizeof(d->buf) - d->got, MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        dial_failed(c, "connection reset during the opening handshake");
        return;
    }
    if (n == 0) {
        dial_failed(c, "connection closed during the opening handshake");
        return;
    }
    from = d->got > 3 ? d->got - 3 : 0;
    d->got += (size_t)n;
    head = hs_head_len(d->buf + from, d->got - from);
    if (!head) {
        if (d->got == sizeof(d->buf))
            raw_close(c, "response head too long");
        return;
    }
    head += from;
    why = hs_check(d->buf, head, d->accept, d->protos, c->protocol, sizeof(c->protocol));
    if (why)
        raw_close(c, why);
    else
        established(c, head);
}

void raw_service(conn *c, short revents)
{
    if (c->dial) {
        dial_io(c, revents);
        return;
    }
    if (revents & (POLLIN | POLLHUP | POLLERR))
        own_read_now(c);
    if ((revents & POLLOUT) && c->raw)
        own_kick(c); /* flushed (or killed) at the end of the service call */
}

void conn_want_write(conn *c)
{
    if (c->raw)
        set_events(c, POLLIN | POLLOUT);
    else if (c->wsi)
        lws_callback_on_writable(c->wsi);
}

/* nothing left to write: POLLIN only (level-triggered POLLOUT would spin) */
void conn_written(conn *c)
{
    if (c->raw && !c->dial)
        set_events(c, POLLIN);
}

void conn_close_timeout(conn *c, int secs)
{
    if (c->raw)
        c->deadline = now_ms() + secs * 1000;
    else if (c->wsi)
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_ACK, secs);
}

void conn_kill_now(conn *c)
{
    if (c->raw)
        raw_close(c, NULL);
    else if (c->wsi)
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_SYNC);
}

void raw_expire(void)
{
    int64_t now = 0;
    int fd;
    for (fd = 0; fd < FDMAP_MAX; fd++) {
        conn *c = g_fdmap[fd];
        if (!c || !c->raw || !c->deadline)
            continue;
        if (!now)
            now = now_ms();
        if (now >= c->deadline)
            raw_close(c, c->dial ? "connect timeout" : NULL);
    }
}

void raw_abandon(conn *c)
{
    dial_free(c);
    if (c->fd >= 0) {
        if (c->fd < FDMAP_MAX && g_fdmap[c->fd] == c)
            g_fdmap[c->fd] = NULL;
        close(c->fd); /* leaves the epoll set with it */
        c->fd = -1;
        if (c->rawev && G.nfds > 0)
            G.nfds--;
        c->rawev = 0;
    }
    c->raw = 0;
}
