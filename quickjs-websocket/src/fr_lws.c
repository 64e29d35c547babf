/*
 * lws' own framing (struct framer fr_lws): the lws path (wss:// on lws,
 * "framing" off) lets libwebsockets frame, mask and parse; this sends our
 * messages through lws_write() (directly, or queued until lws' writable
 * callback), writes our close frame, and reports the send queue.  Part of the
 * libwebsockets adapter (tp_lws.c calls it from its protocol callback).
 */
#include "fr_lws.h"
#include "opts.h"
#include "pool.h"

#include <string.h>

#include <libwebsockets.h>

/* the transport layer's upward interface, as tp_lws_init() was given it */
static const struct tp_up *up;

void fr_lws_init(const struct tp_up *u)
{
    up = u;
}

/* ------------------------------------------------------------------ */
/* lws' framing: sending                                                 */

/* 0 ok, -1 connection broken */
static int write_sbuf(struct tp *t, sbuf *b)
{
    int n = lws_write(t->wsi, b->data + LWS_PRE, b->len,
                      b->text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY);
    return n < 0 ? -1 : 0;
}

int fr_lws_drain(struct tp *t)
{
    while (t->q.head) {
        sbuf *b;
        if (lws_partial_buffered(t->wsi))
            break;
        b = (sbuf *)(void *)txq_shift(&t->q);
        t->q.bytes -= b->len;
        txq_touch(&t->q);
        if (write_sbuf(t, b) < 0) {
            sbuf_free(b);
            return -1;
        }
        sbuf_free(b);
    }
    return 0;
}

static void lws_kill_async(struct tp *t)
{
    if (t->wsi)
        lws_set_timeout(t->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
}

/* a send buffer holding a copy of the message; NULL on OOM */
static sbuf *sbuf_copy(const uint8_t *p, size_t len, int text)
{
    sbuf *b = sbuf_alloc(len);
    if (!b)
        return NULL;
    if (len)
        memcpy(b->data + LWS_PRE, p, len);
    b->text = (uint8_t)text;
    return b;
}

/* Queue or directly write one message. */
static int fr_lws_send(struct tp *t, int text, const uint8_t *p, size_t len)
{
    /* fast path: nothing queued and socket not backed up -> write now */
    if (!t->q.head && !lws_partial_buffered(t->wsi)) {
        int n;
        if (OPT(OPT_POOL) && len <= STACK_SEND_MAX) {
            uint8_t stackbuf[LWS_PRE + STACK_SEND_MAX + 1];
            if (len)
                memcpy(stackbuf + LWS_PRE, p, len);
            n = lws_write(t->wsi, stackbuf + LWS_PRE, len,
                          text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY);
        } else {
            sbuf *b = sbuf_copy(p, len, text);
            if (!b)
                return -1;
            n = write_sbuf(t, b);
            sbuf_free(b);
        }
        if (n < 0)
            lws_kill_async(t);
        else if (lws_partial_buffered(t->wsi))
            lws_callback_on_writable(t->wsi);
        return 0;
    }

    {
        sbuf *b = sbuf_copy(p, len, text);
        if (!b)
            return -1;
        txq_push(&t->q, &b->link);
        t->q.bytes += len;
        txq_touch(&t->q);
        lws_callback_on_writable(t->wsi);
    }
    return 0;
}

/*
 * Our close frame.  We write it ourselves instead of returning -1 with
 * lws_close_reason(): lws' own close flow swallows the peer's answer, so a
 * TCP drop could not be told from a completed handshake.  This way lws stays
 * established and reports the answer (PEER_INITIATED_CLOSE).  lws_write()
 * frames and masks opcode 8 for LWS_WRITE_CLOSE, whose value (4) lws 4.3.5
 * keeps in a private header (lib/roles/ws/private-lib-roles-ws.h; the public
 * enum leaves 4 free for it).
 */
#define QJSWS_LWS_WRITE_CLOSE ((enum lws_write_protocol)4)

int fr_lws_send_close(struct tp *t)
{
    uint8_t b[LWS_PRE + 125];
    size_t n = up->lws.close_body(t, b + LWS_PRE);
    if (lws_write(t->wsi, b + LWS_PRE, n, QJSWS_LWS_WRITE_CLOSE) < 0)
        return -1;
    t->lws.close_sent = 1;
    lws_set_timeout(t->wsi, PENDING_TIMEOUT_CLOSE_ACK, 5);
    return 0;
}

/* close(): the writable callback writes our close frame */
static void fr_lws_close(struct tp *t, int code, const char *reason, size_t rlen)
{
    UNUSED(code);
    UNUSED(reason);
    UNUSED(rlen);
    lws_callback_on_writable(t->wsi);
}

/*
 * Fail: lws' parser is paused (nothing more is parsed, however much a
 * hostile server sends) and the writable callback writes the close frame and
 * returns -1.  The rx callback itself must not return nonzero: lws 4.3.5 then
 * skips resetting its frame buffer, and if it was full (a 64 KiB piece of a
 * longer frame) lws' close flow keeps parsing into it past its end.
 */
static void fr_lws_fail(struct tp *t, int code, const char *reason, size_t rlen)
{
    UNUSED(code);
    UNUSED(reason);
    UNUSED(rlen);
    lws_rx_flow_control(t->wsi, 0);
    lws_callback_on_writable(t->wsi);
}

static int fr_lws_clean(struct tp *t)
{
    UNUSED(t);
    return 1; /* ours was written by us, or lws answers the peer's */
}

static size_t fr_lws_buffered(struct tp *t)
{
    size_t total = 0;
    struct txq_blk *b;
    if (OPT(OPT_BUFFERED))
        return t->q.bytes;
    /* naive: walk the queue every time */
    for (b = t->q.head; b; b = b->next)
        total += ((sbuf *)(void *)b)->len;
    return total;
}

const struct framer fr_lws = {
    .send = fr_lws_send, .close = fr_lws_close, .abort = lws_kill_async,
    .fail = fr_lws_fail, .clean = fr_lws_clean, .buffered = fr_lws_buffered,
};
