/*
 * Own RFC 6455 client framing for ws:// (opt "framing"): masking, the
 * coalesced output queue, the in-place receive parser and socket service.
 */
#include "qjsws.h"
#include "dial.h"
#include "frame.h"
#include "utf8.h"

/* "framing": fd -> conn for the sockets whose I/O we do ourselves */
conn *g_fdmap[FDMAP_MAX];

/* ------------------------------------------------------------------ */
/* opt "framing": RFC 6455 client framing on the raw socket              */

/*
 * For ws:// connections lws does the connect and the opening handshake;
 * once the connection is established we frame, mask and write ourselves
 * (queued frames are coalesced into one sendmsg per wakeup), and read and
 * parse the socket ourselves (lws' own parser handles one byte per call).
 * Both directions are handed over together, and only where lws' parser is
 * between frames with no message unfinished and holds no buffered bytes
 * (see "handing over" below).  lws still owns the wsi: writable
 * notifications, timeouts and the final close.
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
    own_sink_fn sink; /* where received bytes go (conn.c: parse and deliver) */
} F = { .rndpos = 256 };

void own_init(own_sink_fn sink)
{
    F.sink = sink;
}

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

void framing_destroy(void)
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

void own_free_queue(conn *c)
{
    oblk *b = c->ohead, *n;
    while (b) {
        n = b->next;
        oblk_free(b);
        b = n;
    }
    c->ohead = c->otail = NULL;
    c->obytes = 0;
    buf_touch(c);
}

/* n (<= 16) unpredictable bytes (mask keys, handshake nonces), from a
 * getrandom() refilled buffer */
void own_random(uint8_t *out, size_t n)
{
    if (F.rndpos + n > sizeof(F.rnd)) {
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
    memcpy(out, F.rnd + F.rndpos, n);
    F.rndpos += n;
}

/* append one complete masked frame to the output queue; -1 out of memory */
int own_append(conn *c, int opcode, const uint8_t *p, size_t len)
{
    uint8_t h[14], key[4];
    size_t hl, need;
    oblk *b = c->otail;
    own_random(key, 4);
    hl = wsp_header(h, opcode, 1, len, key);
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
        wsp_mask_copy(b->d + b->len + hl, p, len, key);
    b->len += need;
    c->obytes += need;
    buf_touch(c);
    return 0;
}

/* write as much of the queue as the socket takes: 0 ok, -1 broken */
int own_flush(conn *c)
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
            c->tx_failed = 1;
            return -1;
        }
        G.own_writes++;
        c->obytes -= (size_t)w;
        buf_touch(c);
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

void own_mark_dirty(conn *c)
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

/* flush; on a broken socket drop the queue and ask for the kill */
static void own_flush_or_kill(conn *c)
{
    if (own_flush(c) < 0) {
        own_free_queue(c);
        c->kill_pending = 1;
    }
}

/*
 * Output was queued (or a kill requested).  Inside a service call the
 * flush is deferred to its end, so a burst of sends becomes one sendmsg;
 * outside, it happens now.
 */
void own_kick(conn *c)
{
    if (!conn_live(c))
        return;
    if (G.in_service) {
        own_mark_dirty(c);
        /* small frames wait for the end of the service call (coalescing);
         * once a lot is queued, write now so the kernel drains a big burst
         * while it is being queued (bounds the queue, i.e. peak RSS) */
        if (c->obytes < OWN_FLUSH_AT)
            return;
        own_flush_or_kill(c);
        return;
    }
    own_flush_or_kill(c);
    if (c->ohead || c->kill_pending)
        conn_want_write(c); /* lws: the kill happens in WRITEABLE */
    if (c->raw && c->kill_pending)
        own_mark_dirty(c); /* raw: at the end of the next service call */
}

/* end of a service call: flush what was queued, kill what is finished */
void own_post_service(void)
{
    while (G.dirty) {
        conn *c = G.dirty;
        G.dirty = c->dnext;
        c->dirty = 0;
        c->dnext = NULL;
        if (!conn_live(c))
            continue;
        own_flush_or_kill(c);
        if (c->ohead) {
            conn_want_write(c);
        } else {
            conn_written(c);
            if (c->kill_pending)
                conn_kill_now(c); /* outside any lws callback; may free c */
        }
    }
}

/* send a close frame (once) */
void own_send_close(conn *c, int code, const char *reason, size_t rlen)
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
    if (own_append(c, 8, b, n) < 0) {
        c->tx_failed = 1;
        c->kill_pending = 1;
    }
}

/* the socket is readable: read and parse everything there is (bounded) */
void own_read_now(conn *c)
{
    int i;
    if (!F.rxbuf) {
        F.rxbuf = malloc(RXBUF_SIZE);
        if (!F.rxbuf)
            return;
    }
    for (i = 0; i < 16 && conn_live(c) && !c->kill_pending; i++) {
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
        F.sink(c, F.rxbuf, (size_t)n);
        if ((size_t)n < RXBUF_SIZE)
            return;
    }
}

/* ------------------------------------------------------------------ */
/* handing a connection over from lws to our framing                     */

/*
 * lws' parser state is private; what we can know is when it is at a frame
 * boundary with no message unfinished: right after the handshake (nothing
 * parsed yet) and inside the rx callback for the last chunk of a message
 * (lws_is_final_fragment: FIN and no payload left).  What we must also know
 * is that lws holds no bytes it has read but not parsed (its buflist: bytes
 * that came in the same read as the 101 response or behind a message).
 *
 * After the handshake with nothing buffered we take over at once (the
 * normal case).  Otherwise lws keeps parsing; at the end of each message
 * the rx callback pauses it (rx flow control: lws stops parsing right there
 * and keeps the rest buffered) and, outside lws, own_handover() resumes it
 * and checks whether it holds anything; if not, we take over.
 */

/* lws holds no unparsed rx (for any connection it would parse now, so for
 * this one) and nothing of this connection is queued or half written on the
 * lws path, nor a pong of lws' (conn.c: lws' parser is paused until it is
 * written, so its buffered rx would not count); the connection is open and
 * not closing */
static int lws_idle(conn *c)
{
    return lws_service_adjust_timeout(G.ctx, 1, 0) && !lws_partial_buffered(c->wsi) &&
           !c->qhead && c->state == ST_OPEN && !c->close_requested && !c->fail_code &&
           !c->peer_closed && !c->pong_wait && !g_fdmap[c->fd];
}

/* both directions are ours from now on */
static void own_take(conn *c)
{
    c->hwait = 0;
    c->own = c->own_rx = 1;
    g_fdmap[c->fd] = c;
    /* lws must never read this socket again (its own poll() in lws_service
     * would): rx flow control drops its POLLIN, while our registration
     * keeps it (own_events) */
    lws_rx_flow_control(c->wsi, 0);
}

/* LWS_CALLBACK_CLIENT_ESTABLISHED of a ws:// connection, "framing" on */
void own_established(conn *c)
{
    int fd = (int)lws_get_socket_fd(c->wsi);
    if (fd < 0 || fd >= FDMAP_MAX)
        return; /* stays on lws */
    c->fd = fd;
    if (lws_idle(c))
        own_take(c); /* lws has not parsed a single frame byte */
    else
        c->hwait = 1; /* frames came with the 101: lws parses them first */
}

/* lws rx callback, last chunk of a message, c->hwait: pause lws here */
void own_message_end(conn *c)
{
    if (c->hpaused)
        return;
    lws_rx_flow_control(c->wsi, 0);
    c->hpaused = 1;
    c->hnext = G.handover;
    G.handover = c;
}

static void own_unlink_handover(conn *c)
{
    conn **pp;
    if (!c->hpaused)
        return;
    for (pp = &G.handover; *pp; pp = &(*pp)->hnext) {
        if (*pp == c) {
            *pp = c->hnext;
            break;
        }
    }
    c->hpaused = 0;
    c->hnext = NULL;
}

/* outside lws: resume every paused lws parser; take over where it holds
 * nothing (the other paused ones are flow controlled, so lws' answer
 * covers this connection and unpaused ones only: no false "idle").  A
 * failed connection stays paused until it is closed (conn_fail). */
void own_handover(void)
{
    while (G.handover) {
        conn *c = G.handover;
        own_unlink_handover(c);
        if (!c->wsi || c->fail_code)
            continue;
        lws_rx_flow_control(c->wsi, 1);
        if (lws_idle(c))
            own_take(c);
    }
}

/* the conn is leaving "framing": unqueue it, free its frames, unmap its fd */
void own_release(conn *c)
{
    own_unlink_handover(c);
    own_unlink_dirty(c);
    own_free_queue(c);
    if (c->own && c->fd >= 0 && c->fd < FDMAP_MAX && g_fdmap[c->fd] == c)
        g_fdmap[c->fd] = NULL;
    c->own = c->own_rx = 0;
}

/* lws timers are about to run lws' own poll(): read our sockets first */
void own_read_all(void)
{
    int fd;
    for (fd = 0; fd < FDMAP_MAX; fd++) {
        conn *c = g_fdmap[fd];
        if (c && c->own_rx && conn_live(c) && !c->kill_pending)
            own_read_now(c);
    }
}

/*
 * Service one socket: for "framing" connections rx (and hangups) are
 * handled here and only what is left goes to lws.
 */
void service_one(int fd, short events, short revents)
{
    struct lws_pollfd pfd;
    conn *c = (fd >= 0 && fd < FDMAP_MAX) ? g_fdmap[fd] : NULL;
    if (c && c->raw) {
        raw_service(c, revents);
        return;
    }
    if (c && c->own_rx) {
        if (revents & (POLLIN | POLLHUP | POLLERR))
            own_read_now(c);
        revents &= (short)~(POLLIN | POLLHUP | POLLERR);
        if (!revents)
            return;
    }
    pfd.fd = fd;
    pfd.events = events;
    pfd.revents = revents;
    G.lws_in = 1;
    lws_service_fd(G.ctx, &pfd);
    G.lws_in = 0;
}
