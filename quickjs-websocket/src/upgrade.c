/*
 * The opening handshake over a transport (opt "connect"): ws:// over tp_tcp,
 * wss:// over tp_tls (opt "tls"), whose TLS handshake comes first and is the
 * transport's own business (its writes say EAGAIN until it is done).
 *
 * lws' client does the connect, the upgrade request and the check of the
 * response in about 45,000 instructions per connection (its request is
 * printed with vsnprintf, the response parsed one byte per call into a
 * header table malloc'ed per connection, SHA-1 in portable C) and 22 system
 * calls; here the request is put together with memcpy (handshake_core.c) and
 * written right after connect(): on loopback the connection is established by
 * then; elsewhere the write says EAGAIN and waits for POLLOUT.  The response
 * head is checked in one pass.  Once the 101 is checked the connection is on
 * our framing (frame.c) from its first byte, so bytes that came with the 101
 * go to our parser, and nothing is ever handed over.
 *
 * Needs "framing" (the connection's I/O is ours) and "batch" (its socket sits
 * in our epoll set), and "tls" for wss://.  Timeouts: connect and
 * handshake 15 s (lws' default), close acknowledgement 5 s (frame.c), checked
 * by the housekeeping tick.
 */
#include "upgrade.h"
#include "handshake_core.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_S 15

struct upg {
    size_t reqlen, reqoff; /* the request: buf[0..reqlen), written up to reqoff */
    size_t got;            /* response bytes in buf (once the request is out) */
    char accept[HS_ACCEPT_LEN + 1];
    const char *protos;    /* offered subprotocols (in tail), or NULL */
    int pmd_offered;       /* permessage-deflate offered, with ... */
    struct pmd_params pmd; /* ... these parameters */
    char buf[HS_HEAD_MAX];
    char tail[];
};

static struct fr_up up;

void upg_init(const struct fr_up *u)
{
    up = *u;
}

int upg_wanted(int secure)
{
    unsigned need = OPT_CONNECT | OPT_FRAMING | OPT_BATCH | (secure ? OPT_TLS : 0);
    return (g_opts & need) == need;
}

/* the transport holds bytes that no POLLIN will announce (TLS) */
static int pending(struct tp *t)
{
    return t->ops->pending && t->ops->pending(t);
}

void upg_free(struct fr *f)
{
    if (f->upg) {
        free(f->upg);
        f->upg = NULL;
    }
}

/* write what is left of the request: 0 all written, 1 wait for POLLOUT,
 * -1 failed (errno) */
static int send_request(struct fr *f)
{
    struct tp *t = &f->tp;
    struct upg *u = f->upg;
    while (u->reqoff < u->reqlen) {
        ssize_t n = t->ops->write(t, u->buf + u->reqoff, u->reqlen - u->reqoff);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 1;
            return -1;
        }
        u->reqoff += (size_t)n;
    }
    return 0;
}

/* the request from its start, on the transport's current attempt and, while
 * writing fails at once, on its next ones: 0 under way, -1 every one failed */
static int send_first(struct fr *f, const char **why)
{
    struct tp *t = &f->tp;
    for (;;) {
        int r;
        f->upg->reqoff = 0;
        r = send_request(f);
        if (r >= 0) {
            t->ops->poll(t, r ? POLLOUT : POLLIN);
            return 0;
        }
        *why = "connection refused";
        if (!t->ops->retry || t->ops->retry(t, why) < 0)
            return -1;
    }
}

int upg_start(struct fr *f, const struct tp_ops *ops, const char *host, int port,
              const char *path, const char *hosthdr, const char *protos,
              const struct pmd_params *pmd, const char **why)
{
    struct tp *t = &f->tp;
    size_t pl = protos && *protos ? strlen(protos) + 1 : 0;
    struct upg *u = malloc(sizeof(*u) + pl);
    uint8_t nonce[16];
    char exts[160];
    if (!u) {
        *why = "out of memory";
        return -1;
    }
    memset(u, 0, offsetof(struct upg, buf));
    f->upg = u;
    if (pl) {
        memcpy(u->tail, protos, pl);
        u->protos = u->tail;
    }
    if (pmd) {
        if (!pmd_offer(exts, sizeof(exts), pmd)) {
            *why = "bad permessage-deflate parameters";
            goto fail;
        }
        u->pmd_offered = 1;
        u->pmd = *pmd;
    }
    fr_random(nonce, sizeof(nonce));
    u->reqlen = hs_request(u->buf, sizeof(u->buf), path, hosthdr, protos, pmd ? exts : NULL, nonce,
                           u->accept);
    if (!u->reqlen) {
        *why = "upgrade request too long";
        goto fail;
    }
    t->ops = ops;
    if (ops->open(t, host, port, why) < 0)
        goto fail;
    if (send_first(f, why) < 0) {
        ops->abandon(t);
        goto fail;
    }
    ops->timeout(t, CONNECT_TIMEOUT_S, "connect timeout");
    return 0;
fail:
    upg_free(f);
    return -1;
}

/* the upgrade is over without a connection: close it, report why (may free f) */
static void upg_close(struct fr *f, const char *why)
{
    upg_free(f);
    f->tp.ops->close(&f->tp, why);
}

static void upg_failed(struct fr *f, const char *why)
{
    struct tp *t = &f->tp;
    /* before the first response byte, another address may do */
    if (f->upg->got == 0 && t->ops->retry && t->ops->retry(t, &why) == 0 &&
        send_first(f, &why) == 0)
        return;
    upg_close(f, why);
}

/* the server's Sec-WebSocket-Extensions answer to our permessage-deflate offer:
 * checked (pmd_agree), and the connection's deflate state made; NULL, or why
 * the answer is refused (the connection then fails) */
static const char *upg_deflate_answer(struct fr *f, const char *ext, size_t extlen)
{
    struct pmd_agreed a;
    const char *why = pmd_agree(ext, extlen, &f->upg->pmd, &a);
    struct pmd_conn *pc;
    if (why)
        return why;
    pc = malloc(sizeof(*pc) + extlen + 1);
    if (!pc)
        return "out of memory";
    memset(pc, 0, sizeof(*pc));
    pmd_stream_setup(&pc->tx, &pc->rx, &a);
    memcpy(pc->ext, ext, extlen);
    pc->ext[extlen] = 0;
    f->pmd = pc;
    return NULL;
}

/* the 101 is in: the connection is open, and ours from its first byte */
static void established(struct fr *f, size_t head)
{
    struct tp *t = &f->tp;
    struct upg *u = f->upg;
    size_t rest = u->got - head;
    int full = u->got == sizeof(u->buf);
    t->ops->timeout(t, 0, NULL);
    fr_start(f);
    up.opened(f);
    /* frames that came with the 101 (the rx handlers stop at a failure) */
    if (rest && tp_live(t) && !f->kill_pending)
        up.rx(f, (const uint8_t *)u->buf + head, rest);
    upg_free(f);
    if ((full || pending(t)) && tp_live(t) && !f->kill_pending)
        fr_read(f); /* the socket (or the transport) may hold more */
}

static void upg_io(struct fr *f, short revents)
{
    struct tp *t = &f->tp;
    struct upg *u = f->upg;
    ssize_t n;
    size_t from, head;
    const char *why;

    if (f->kill_pending)
        return; /* aborted: the end of the service call closes it */
    if (u->reqoff < u->reqlen) {
        int r = send_request(f);
        if (r < 0)
            upg_failed(f, "connection refused");
        else if (r == 0)
            t->ops->poll(t, POLLIN);
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
again:
    n = t->ops->read(t, u->buf + u->got, sizeof(u->buf) - u->got);
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        upg_failed(f, "connection reset during the opening handshake");
        return;
    }
    if (n == 0) {
        upg_failed(f, "connection closed during the opening handshake");
        return;
    }
    from = u->got > 3 ? u->got - 3 : 0;
    u->got += (size_t)n;
    head = hs_head_len(u->buf + from, u->got - from);
    if (!head) {
        if (u->got == sizeof(u->buf))
            upg_close(f, "response head too long");
        else if (pending(t))
            goto again;
        return;
    }
    head += from;
    {
        const char *ext = NULL;
        size_t extlen = 0;
        why = hs_check(u->buf, head, u->accept, u->protos, t->protocol, sizeof(t->protocol),
                       u->pmd_offered ? &ext : NULL, u->pmd_offered ? &extlen : NULL);
        if (!why && ext)
            why = upg_deflate_answer(f, ext, extlen);
    }
    if (why)
        upg_close(f, why);
    else
        established(f, head);
}

void own_io(struct tp *t, short revents)
{
    struct fr *f = fr_of(t);
    if (f->upg)
        upg_io(f, revents);
    else
        fr_io(f, revents);
}
