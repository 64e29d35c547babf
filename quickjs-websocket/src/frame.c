/*
 * Our RFC 6455 client framing: masking, the coalesced output queue, the read
 * loop, the flush list.
 *
 * Frames are appended whole to a chain of 64 KiB blocks and written with one
 * sendmsg per wakeup (iovec over the blocks); nothing else writes on such a
 * connection (pings are answered and close frames sent from here), so nothing
 * can interleave mid-frame.  The socket is read up to 16 x 256 KiB per
 * wakeup and the bytes go up to the parser (fr_up.rx).
 */
#include "frame.h"
#include "loop.h"
#include "wsproto.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

typedef struct oblk {
    struct txq_blk link; /* first: queued on the connection's struct txq */
    size_t off, len, cap;
    uint8_t d[];
} oblk;

#define OBLK_CAP (64 * 1024)
/*
 * Blocks are kept for reuse (spares) up to OBLK_KEEP bytes of capacity, those
 * of frames larger than OBLK_CAP (a 64 KiB message and its header) too; when
 * idle, at most one block of OBLK_CAP stays (oblk_trim).
 */
#define OBLK_KEEP ((size_t)32 << 20)
#define OBLK_ROUND 4096 /* a larger block's capacity, rounded up: reusable by near sizes */
#define RXBUF_SIZE (256 * 1024)
#define OWN_FLUSH_AT (256 * 1024)
#define PEEK_LEN 10 /* a server frame's longest header (no mask key) */

struct spares {
    oblk *std;                    /* kept blocks of OBLK_CAP */
    oblk *big;                    /* kept larger blocks */
    size_t bytes;                 /* their capacity, <= OBLK_KEEP */
    size_t n;
};

static struct {
    struct spares sp;
    struct pmd_buf zout;          /* a compressed message (permessage-deflate), one for the process */
    int nown;                     /* connections on our framing (fr_start .. fr_release) */
    uint64_t moves, moves_seen;   /* blocks taken or given back; as the last tick saw it */
    uint8_t *rxbuf;
    uint8_t rnd[256];
    size_t rndpos;
    struct fr_up up;
    struct fr *dirty;             /* connections to flush (and maybe kill) after service */
    struct fr *map[LOOP_FD_MAX];  /* fd -> connection we read (fr_read_all) */
    uint64_t writes, reads, sunk;
} F = { .rndpos = 256 };

void fr_init(const struct fr_up *up)
{
    F.up = *up;
}

static inline oblk *oblk_next(oblk *b)
{
    return (oblk *)(void *)b->link.next;
}

static oblk *spare_take(oblk **pp)
{
    oblk *b = *pp;
    *pp = oblk_next(b);
    F.sp.n--;
    F.sp.bytes -= b->cap;
    return b;
}

/*
 * A block for a frame of `need` bytes: a kept one (of OBLK_CAP, or the first
 * larger one that fits), or a new one of OBLK_CAP, or of `need` rounded up.
 *
 * Why the larger ones are kept too: a burst of 64 KiB messages queues one
 * such block per message (the socket takes a few MiB, the rest waits), and
 * glibc serves each from the top of the heap and gives the heap back to the
 * kernel (brk) once the queue has drained: every message's block was
 * page-faulted in anew.  Kept, the next burst writes into memory already
 * mapped.  Peak memory is the queue's peak either way; keeping only delays
 * giving it back until the connections are idle.
 */
static oblk *oblk_new(size_t need)
{
    oblk *b = NULL, **pp;
    F.moves++;
    if (need <= OBLK_CAP && F.sp.std) {
        b = spare_take(&F.sp.std);
    } else {
        for (pp = &F.sp.big; *pp; pp = (oblk **)(void *)&(*pp)->link.next) {
            if ((*pp)->cap >= need) {
                b = spare_take(pp);
                break;
            }
        }
    }
    if (!b) {
        size_t cap = need <= OBLK_CAP ? OBLK_CAP : (need + OBLK_ROUND - 1) / OBLK_ROUND * OBLK_ROUND;
        b = malloc(sizeof(oblk) + cap);
        if (!b)
            return NULL;
        b->cap = cap;
    }
    b->link.next = NULL;
    b->off = b->len = 0;
    return b;
}

static void oblk_free(oblk *b)
{
    oblk **list = b->cap == OBLK_CAP ? &F.sp.std : &F.sp.big;
    F.moves++;
    if (F.sp.bytes + b->cap > OBLK_KEEP) {
        free(b);
        return;
    }
    b->link.next = (struct txq_blk *)(void *)*list;
    *list = b;
    F.sp.n++;
    F.sp.bytes += b->cap;
}

static void free_list(oblk *b)
{
    while (b) {
        oblk *n = oblk_next(b);
        free(b);
        b = n;
    }
}

/* idle: keep at most one block of OBLK_CAP, free the others */
static void oblk_trim(void)
{
    oblk *keep = F.sp.std;
    free_list(F.sp.big);
    F.sp.big = NULL;
    if (keep) {
        free_list(oblk_next(keep));
        keep->link.next = NULL;
    }
    F.sp.std = keep;
    F.sp.n = keep ? 1 : 0;
    F.sp.bytes = keep ? OBLK_CAP : 0;
}

/*
 * The housekeeping tick (every 200 ms while connections exist): a whole
 * interval in which no output block was taken or given back (nothing sent,
 * nothing drained: every queue empty, or stuck) is idle, and the kept blocks
 * are trimmed; the last connection on our framing going away trims them too
 * (fr_release), since no tick follows.
 */
void fr_tick(void)
{
    if (F.moves == F.moves_seen && F.sp.bytes > OBLK_CAP)
        oblk_trim();
    F.moves_seen = F.moves;
}

void fr_spares(size_t *blocks, size_t *bytes)
{
    *blocks = F.sp.n;
    *bytes = F.sp.bytes;
}

static void oblk_free_blk(struct txq_blk *b)
{
    oblk_free((oblk *)(void *)b);
}

void fr_destroy(void)
{
    free_list(F.sp.std);
    free_list(F.sp.big);
    F.sp = (struct spares){ 0 };
    free(F.rxbuf);
    F.rxbuf = NULL;
    free(F.zout.p);
    F.zout = (struct pmd_buf){ 0 };
}

void fr_random(uint8_t *out, size_t n)
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

int fr_append(struct fr *f, int opcode, const uint8_t *p, size_t len)
{
    struct txq *q = &f->tp.q;
    uint8_t h[14], key[4];
    size_t hl, need;
    oblk *b = (oblk *)(void *)q->tail;
    fr_random(key, 4);
    hl = wsp_header(h, opcode, 1, len, key);
    need = hl + len;
    if (!b || b->cap - b->len < need) {
        b = oblk_new(need);
        if (!b)
            return -1;
        txq_push(q, &b->link);
    }
    memcpy(b->d + b->len, h, hl);
    if (len)
        wsp_mask_copy(b->d + b->len + hl, p, len, key);
    b->len += need;
    q->bytes += need;
    txq_touch(q);
    return 0;
}

/* the queue dropped (a broken socket, the peer gone, the release): nothing is owed */
static void fr_clear(struct fr *f)
{
    txq_clear(&f->tp.q);
    if (f->pmd) {
        f->pmd->owed_h = f->pmd->owed_n = 0;
        f->pmd->extra = 0;
    }
}

/* permessage-deflate: w more bytes written; the compressed frames now wholly
 * written no longer count their uncompressed length in bufferedAmount */
static __attribute__((noinline)) void pmd_written(struct fr *f, size_t w)
{
    struct pmd_conn *pc = f->pmd;
    struct txq *q = &f->tp.q;
    pc->out += w;
    while (pc->owed_h < pc->owed_n && pc->owed[pc->owed_h].end <= pc->out) {
        q->bytes -= pc->owed[pc->owed_h].extra;
        pc->extra -= pc->owed[pc->owed_h].extra;
        pc->owed_h++;
    }
    if (pc->owed_h == pc->owed_n)
        pc->owed_h = pc->owed_n = 0;
}

/* a compressed frame was just appended (the last in the queue) for a message of
 * len bytes: count the message's length until the frame is written */
static void pmd_owe(struct fr *f, size_t len, size_t zlen)
{
    struct pmd_conn *pc = f->pmd;
    struct txq *q = &f->tp.q;
    size_t extra = len > zlen ? len - zlen : 0;
    if (!extra)
        return;
    if (pc->owed_n == pc->owed_cap) {
        if (pc->owed_h) { /* move the live ones down */
            memmove(pc->owed, pc->owed + pc->owed_h, (pc->owed_n - pc->owed_h) * sizeof(*pc->owed));
            pc->owed_n -= pc->owed_h;
            pc->owed_h = 0;
        } else {
            size_t cap = pc->owed_cap ? pc->owed_cap * 2 : 16;
            struct pmd_owed *o = realloc(pc->owed, cap * sizeof(*o));
            if (!o)
                return; /* counted as sent, compressed */
            pc->owed = o;
            pc->owed_cap = cap;
        }
    }
    /* its end: what was written while any was owed, and the output not yet written */
    pc->owed[pc->owed_n].end = pc->out + (q->bytes - pc->extra);
    pc->owed[pc->owed_n++].extra = extra;
    pc->extra += extra;
    q->bytes += extra;
    txq_touch(q);
}

int fr_flush(struct fr *f)
{
    struct tp *t = &f->tp;
    struct txq *q = &t->q;
    while (q->head) {
        struct iovec iov[64];
        struct txq_blk *l;
        int n = 0;
        ssize_t w;
        for (l = q->head; l && n < (int)countof(iov); l = l->next, n++) {
            oblk *b = (oblk *)(void *)l;
            iov[n].iov_base = b->d + b->off;
            iov[n].iov_len = b->len - b->off;
        }
        w = t->ops->writev(t, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            f->tx_failed = 1;
            return -1;
        }
        F.writes++;
        q->bytes -= (size_t)w;
        if (f->pmd && f->pmd->owed_n)
            pmd_written(f, (size_t)w);
        txq_touch(q);
        while (w > 0) {
            oblk *b = (oblk *)(void *)q->head;
            if ((size_t)w >= b->len - b->off) {
                w -= (ssize_t)(b->len - b->off);
                txq_shift(q);
                oblk_free(b);
            } else {
                b->off += (size_t)w;
                w = 0;
            }
        }
        if (q->head && ((oblk *)(void *)q->head)->off)
            return 0; /* socket full */
    }
    return 0;
}

static void mark_dirty(struct fr *f)
{
    if (f->dirty)
        return;
    f->dirty = 1;
    f->dnext = F.dirty;
    F.dirty = f;
}

static void unlink_dirty(struct fr *f)
{
    struct fr **pp;
    if (!f->dirty)
        return;
    for (pp = &F.dirty; *pp; pp = &(*pp)->dnext) {
        if (*pp == f) {
            *pp = f->dnext;
            break;
        }
    }
    f->dirty = 0;
    f->dnext = NULL;
}

/* flush; on a broken socket drop the queue and ask for the kill */
static void flush_or_kill(struct fr *f)
{
    if (fr_flush(f) < 0) {
        fr_clear(f);
        f->kill_pending = 1;
    }
}

/*
 * Output was queued (or a kill requested).  Inside a service call the
 * flush is deferred to its end, so a burst of sends becomes one sendmsg;
 * outside, it happens now.
 */
void fr_kick(struct fr *f)
{
    struct tp *t = &f->tp;
    if (!tp_live(t))
        return;
    if (loop_in_service()) {
        mark_dirty(f);
        /* small frames wait for the end of the service call (coalescing);
         * once a lot is queued, write now so the kernel drains a big burst
         * while it is being queued (bounds the queue, i.e. peak RSS) */
        if (t->q.bytes < OWN_FLUSH_AT)
            return;
        flush_or_kill(f);
        return;
    }
    flush_or_kill(f);
    if (t->q.head || f->kill_pending)
        t->ops->poll(t, POLLIN | POLLOUT); /* lws: the kill happens in its writable callback */
    if (f->kill_pending && !(t->ops->flags & TP_WRITABLE_KILLS))
        mark_dirty(f); /* at the end of the next service call */
}

/*
 * RFC 6455 7.1.1 and 7.1.7: once a failure's close frame is written, end our
 * direction (TLS: close_notify first) and read, and drop, what the peer still
 * sends until it closes or the close timeout passes.  Closing a socket with
 * unread data in it makes the kernel reset the connection, and a peer that is
 * still sending then often never reads our close frame.  0 lingering, -1 not
 * possible (close now).
 */
static int linger(struct fr *f)
{
    struct tp *t = &f->tp;
    if (f->tx_failed || !t->ops->shutdown || t->ops->shutdown(t) < 0)
        return -1;
    f->linger = 2;
    t->ops->timeout(t, 5, NULL);
    t->ops->poll(t, POLLIN);
    return 0;
}

/* lingering: read and drop until the peer's end (then close at the end of the
 * service call) */
static void drain(struct fr *f)
{
    struct tp *t = &f->tp;
    int i;
    if (!F.rxbuf && !(F.rxbuf = malloc(RXBUF_SIZE)))
        return; /* the close timeout ends it */
    for (i = 0; i < 16; i++) {
        ssize_t n = t->ops->read(t, F.rxbuf, RXBUF_SIZE);
        if (n > 0 || (n < 0 && errno == EINTR))
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (t->ops->pending && t->ops->pending(t))
                continue;
            return;
        }
        f->linger = 3;
        mark_dirty(f);
        return;
    }
}

void fr_post_service(void)
{
    while (F.dirty) {
        struct fr *f = F.dirty;
        struct tp *t = &f->tp;
        F.dirty = f->dnext;
        f->dirty = 0;
        f->dnext = NULL;
        if (!tp_live(t))
            continue;
        flush_or_kill(f);
        if (t->q.head) {
            t->ops->poll(t, POLLIN | POLLOUT);
        } else {
            /* nothing left to write: POLLIN only (level-triggered POLLOUT would spin) */
            if (!f->upg)
                t->ops->poll(t, POLLIN);
            if (f->kill_pending && f->linger == 1 && linger(f) == 0)
                continue;
            if (f->kill_pending && f->linger != 2)
                t->ops->close(t, NULL); /* outside any lws callback; may free f */
        }
    }
}

void fr_send_close(struct fr *f, int code, const char *reason, size_t rlen)
{
    uint8_t b[125];
    size_t n = 0;
    if (f->close_sent)
        return;
    f->close_sent = 1;
    if (code != 1005 && code > 0) {
        b[0] = (uint8_t)(code >> 8);
        b[1] = (uint8_t)code;
        if (rlen > 123)
            rlen = 123;
        if (rlen)
            memcpy(b + 2, reason, rlen);
        n = 2 + rlen;
    }
    if (fr_append(f, 8, b, n) < 0) {
        f->tx_failed = 1;
        f->kill_pending = 1;
    }
}

void fr_pong(struct fr *f, const uint8_t *p, size_t n)
{
    if (!f->close_sent && fr_append(f, 10, p, n) < 0)
        f->kill_pending = 1;
    fr_kick(f);
}

void fr_close_reply(struct fr *f, int code)
{
    /* echo the code (RFC 6455 5.5.1), then drop the connection */
    fr_send_close(f, code, NULL, 0);
    f->kill_pending = 1;
    fr_kick(f);
}

void fr_read(struct fr *f)
{
    struct tp *t = &f->tp;
    int i;
    if (!F.rxbuf) {
        F.rxbuf = malloc(RXBUF_SIZE);
        if (!F.rxbuf)
            return;
    }
    for (i = 0; i < 16 && tp_live(t) && !f->kill_pending; i++) {
        uint8_t *p = F.rxbuf;
        size_t want = RXBUF_SIZE, owed = 0;
        uint8_t *d = F.up.sink ? F.up.sink(f, &owed) : NULL;
        ssize_t n;
        if (d) {
            p = d;
            want = owed;
        } else if ((t->ops->flags & TP_SMALL_READS) && (f->peek || owed)) {
            /* large frames come: the rest of this one and the next one's
             * header only, so that the next payload can be read into its
             * message (what else the transport holds stays there) */
            want = owed < RXBUF_SIZE - PEEK_LEN ? owed + PEEK_LEN : RXBUF_SIZE;
        }
        n = t->ops->read(t, p, want);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            n = 0;
        }
        if (n == 0) {
            /* peer gone (clean only if the close handshake was done) */
            fr_clear(f);
            f->kill_pending = 1;
            mark_dirty(f);
            return;
        }
        F.reads++;
        if (d)
            F.sunk++;
        f->peek = d != NULL;
        F.up.rx(f, p, (size_t)n); /* stops at a failure or a close frame (kill_pending) */
        /* a short read emptied the socket; a transport may still hold bytes
         * no POLLIN will announce */
        if ((size_t)n < want && !(t->ops->pending && t->ops->pending(t)))
            return;
    }
}

void fr_io(struct fr *f, short revents)
{
    if (f->linger == 2) {
        if (revents & (POLLIN | POLLHUP | POLLERR))
            drain(f);
        return;
    }
    if (revents & (POLLIN | POLLHUP | POLLERR))
        fr_read(f);
    if ((revents & POLLOUT) && tp_live(&f->tp))
        fr_kick(f); /* flushed (or killed) at the end of the service call */
}

void fr_read_all(void)
{
    int fd;
    for (fd = 0; fd < loop_fd_top; fd++) { /* every mapped fd was added to the loop first */
        struct fr *f = F.map[fd];
        if (f && f->own && tp_live(&f->tp) && !f->kill_pending)
            fr_read(f);
    }
}

void fr_start(struct fr *f)
{
    struct tp *t = &f->tp;
    if (!f->own)
        F.nown++;
    f->own = 1;
    t->fr = &fr_own;
    t->q.free_blk = oblk_free_blk;
    if (t->fd >= 0 && t->fd < LOOP_FD_MAX) {
        F.map[t->fd] = f;
        f->mapfd = t->fd;
    }
}

void fr_take(struct tp *t)
{
    fr_start(fr_of(t));
}

void fr_release(struct fr *f)
{
    struct tp *t = &f->tp;
    int was_own;
    unlink_dirty(f);
    if (f->mapfd >= 0 && F.map[f->mapfd] == f)
        F.map[f->mapfd] = NULL;
    f->mapfd = -1;
    was_own = f->own;
    f->own = 0;
    if (f->pmd) {
        pmd_stream_free(&f->pmd->tx);
        pmd_stream_free(&f->pmd->rx);
        free(f->pmd->owed);
        free(f->pmd);
        f->pmd = NULL;
    }
    if (t->ops && t->ops->release)
        t->ops->release(t);
    txq_clear(&t->q);
    if (was_own && --F.nown == 0)
        oblk_trim(); /* no connection left: no tick will look */
}

int fr_writable(struct tp *t)
{
    struct fr *f = fr_of(t);
    if (fr_flush(f) < 0)
        return -1;
    if (t->q.head) {
        t->ops->poll(t, POLLIN | POLLOUT);
        return 0;
    }
    return f->kill_pending ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* struct framer                                                         */

/* the compressed buffer kept between messages: up to this capacity */
#define ZOUT_KEEP ((size_t)1 << 20)

/*
 * permessage-deflate: the message compressed (pmd_deflate, into the process'
 * one output buffer: the frame is copied out of it at once) and sent as one
 * frame with RSV1.  Out of line: a connection without deflate runs one
 * predictable branch of it (fr_own_send).
 */
static __attribute__((noinline)) int fr_send_deflated(struct fr *f, int text, const uint8_t *p,
                                                   size_t len)
{
    struct pmd_buf *z = &F.zout;
    int r;
    z->len = 0;
    if (pmd_deflate(&f->pmd->tx, p, len, 1, z) != PMD_OK)
        r = -1;
    else /* wsp_header() ORs the opcode into the first byte: 0x40 is RSV1 */
        r = fr_append(f, 0x40 | (text ? 1 : 2), z->p, z->len);
    if (r == 0)
        pmd_owe(f, len, z->len);
    if (z->cap > ZOUT_KEEP) {
        free(z->p);
        *z = (struct pmd_buf){ 0 };
    }
    if (r < 0)
        return -1;
    fr_kick(f);
    return 0;
}

static int fr_own_send(struct tp *t, int text, const uint8_t *p, size_t len)
{
    struct fr *f = fr_of(t);
    if (f->kill_pending || f->close_sent)
        return 0;
    if (__builtin_expect(f->pmd != NULL, 0))
        return fr_send_deflated(f, text, p, len);
    if (fr_append(f, text ? 1 : 2, p, len) < 0)
        return -1;
    fr_kick(f);
    return 0;
}

static void fr_own_close(struct tp *t, int code, const char *reason, size_t rlen)
{
    struct fr *f = fr_of(t);
    fr_send_close(f, code, reason, rlen);
    if (!f->kill_pending)
        t->ops->timeout(t, 5, NULL); /* the close acknowledgement */
    fr_kick(f);
}

/* close() or a failure while the upgrade runs: drop it at the end of the
 * service call (nothing can be raised from inside JS's call) */
static void fr_own_abort(struct tp *t)
{
    struct fr *f = fr_of(t);
    f->kill_pending = 1;
    fr_kick(f);
}

static void fr_own_fail(struct tp *t, int code, const char *reason, size_t rlen)
{
    struct fr *f = fr_of(t);
    if (!f->own) {
        fr_own_abort(t); /* still connecting: no receive path yet */
        return;
    }
    fr_send_close(f, code, reason, rlen);
    f->kill_pending = 1;
    f->linger = 1; /* once it is written: end our side, read to the peer's end */
    t->ops->timeout(t, 5, NULL); /* (a peer that reads nothing cannot hold it) */
    fr_kick(f);
}

/* our close frame queued and the queue written out */
static int fr_own_clean(struct tp *t)
{
    struct fr *f = fr_of(t);
    return f->own ? f->close_sent && !f->tx_failed && !t->q.head : 1;
}

static size_t fr_own_buffered(struct tp *t)
{
    return t->q.bytes; /* framed bytes, O(1) */
}

const struct framer fr_own = {
    .send = fr_own_send, .close = fr_own_close, .abort = fr_own_abort,
    .fail = fr_own_fail, .clean = fr_own_clean, .buffered = fr_own_buffered,
};

uint64_t fr_writes(void)
{
    return F.writes;
}

uint64_t fr_reads(void)
{
    return F.reads;
}

uint64_t fr_sunk(void)
{
    return F.sunk;
}
